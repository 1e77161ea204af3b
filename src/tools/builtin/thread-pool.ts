import { Worker } from 'node:worker_threads';
import type { ResourceLimits, Transferable } from 'node:worker_threads';

/** A job ran past its deadline; its thread was terminated mid-job. */
export class ThreadDeadlineError extends Error {
  override name = 'ThreadDeadlineError';
}

/** A thread died during a job: out of memory (`code` ERR_WORKER_OUT_OF_MEMORY), or it threw or exited. */
export class ThreadFailedError extends Error {
  override name = 'ThreadFailedError';

  constructor(
    message: string,
    /** The Node error code, when there is one. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** How a {@link ThreadPool} runs its threads. */
export interface ThreadPoolOptions {
  /**
   * The threads' code, a CommonJS script run with `eval`: it loads the same from the compiled
   * output, under tsx and under vitest, with no loader in the thread. For every message it receives
   * it posts exactly one reply.
   */
  source: string;
  /** Threads running at once; further jobs wait for one to be free. */
  maxThreads: number;
  /** An idle thread is ended after this many milliseconds. */
  idleMs: number;
  /** Heap and stack limits of each thread: a thread over them dies, its job fails. */
  resourceLimits: ResourceLimits;
}

/** Options of one job. */
export interface JobOptions {
  /** Milliseconds the job may run once its thread has it; past that the thread is terminated. */
  deadlineMs: number;
  /** Aborting terminates the thread at once (or stops waiting for one). */
  signal: AbortSignal;
  transfer?: readonly Transferable[];
}

/**
 * Runs jobs on a few worker threads, so that work which may run long (a regex backtracking on one
 * line can take forever) never blocks the main thread's event loop, and can be stopped: a thread
 * that runs past its deadline or whose call is aborted is terminated, which stops it even inside a
 * regex match. Threads are reused between jobs, never keep the process alive (`unref`), and end
 * when idle.
 */
export class ThreadPool {
  readonly #idle: PooledThread[] = [];
  readonly #waiting: ((thread: PooledThread) => void)[] = [];
  #threads = 0;

  constructor(private readonly options: ThreadPoolOptions) {}

  /** Threads alive now, busy or idle. */
  get threadCount(): number {
    return this.#threads;
  }

  /** Runs one job on a free thread and resolves with its reply. */
  async run(message: unknown, options: JobOptions): Promise<unknown> {
    const thread = await this.#acquire(options.signal);
    let healthy = false;
    try {
      const reply = await thread.run(message, options);
      healthy = true;
      return reply;
    } finally {
      // A thread that failed is ending; its exit lets a waiting job start a fresh one.
      if (healthy) this.#release(thread);
    }
  }

  /** Ends every idle thread now (busy ones end when their job does). */
  async close(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map((thread) => thread.end()));
  }

  async #acquire(signal: AbortSignal): Promise<PooledThread> {
    signal.throwIfAborted();
    // An idle thread may be ending already (its idle time ran out, or it died): take a live one.
    for (let idle = this.#idle.pop(); idle !== undefined; idle = this.#idle.pop()) {
      if (idle.alive) {
        idle.wake();
        return idle;
      }
    }
    if (this.#threads < this.options.maxThreads) return this.#spawn();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiting.splice(this.#waiting.indexOf(take), 1);
        reject(signal.reason as Error);
      };
      const take = (thread: PooledThread): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(thread);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(take);
    });
  }

  #spawn(): PooledThread {
    this.#threads++;
    const thread = new PooledThread(this.options, () => {
      this.#threads--;
      const index = this.#idle.indexOf(thread);
      if (index !== -1) this.#idle.splice(index, 1);
      // Its slot is free: a job waiting for one gets a fresh thread.
      const next = this.#waiting.shift();
      if (next !== undefined) next(this.#spawn());
    });
    return thread;
  }

  #release(thread: PooledThread): void {
    const next = this.#waiting.shift();
    if (next !== undefined) {
      next(thread);
      return;
    }
    this.#idle.push(thread);
    thread.sleep(this.options.idleMs);
  }
}

/** One worker thread running one job at a time. */
class PooledThread {
  readonly #worker: Worker;
  #online = false;
  /** Starts the deadline of the job posted before the thread came online. */
  #whenOnline: (() => void) | undefined;
  /** Fails the job in progress when the thread dies. */
  #fail: ((error: Error) => void) | undefined;
  #dead: Error | undefined;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(options: ThreadPoolOptions, onExit: () => void) {
    this.#worker = new Worker(options.source, {
      eval: true,
      resourceLimits: options.resourceLimits,
      // Not the worker's own flags: they may load a TypeScript loader the script does not need.
      execArgv: [],
      // The thread needs none of the worker's environment (which holds its secrets).
      env: {},
    });
    this.#worker.unref();
    this.#worker.once('online', () => {
      this.#online = true;
      this.#whenOnline?.();
    });
    this.#worker.on('error', (error: Error & { code?: string }) => {
      this.#die(new ThreadFailedError(error.message, error.code));
    });
    this.#worker.once('exit', () => {
      clearTimeout(this.#idleTimer);
      this.#die(new ThreadFailedError('the thread exited', undefined));
      onExit();
    });
  }

  /** Posts the job and waits for the reply, the deadline, the abort or the thread's death. */
  run(message: unknown, { deadlineMs, signal, transfer }: JobOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#worker.off('message', onMessage);
        this.#fail = undefined;
        this.#whenOnline = undefined;
      };
      const stop = (error: Error): void => {
        settle();
        this.end().catch(() => undefined);
        reject(error);
      };
      const onMessage = (reply: unknown): void => {
        settle();
        resolve(reply);
      };
      const onAbort = (): void => stop(signal.reason as Error);
      if (this.#dead !== undefined) return stop(this.#dead);
      if (signal.aborted) return stop(signal.reason as Error);
      this.#fail = (error) => {
        settle();
        reject(error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#worker.on('message', onMessage);
      // Queued until the thread runs; its start-up does not count against the job's deadline.
      try {
        this.#worker.postMessage(message, transfer);
      } catch (error) {
        // Not cloneable: the thread is fine, but is ended like any that failed a job (simpler than a third state).
        stop(error as Error);
        return;
      }
      const startDeadline = (): void => {
        timer = setTimeout(
          () => stop(new ThreadDeadlineError(`the job ran for more than ${deadlineMs} ms`)),
          deadlineMs,
        );
      };
      if (this.#online) startDeadline();
      else this.#whenOnline = startDeadline;
    });
  }

  /** Whether it can take a job: not terminated, not dead. */
  get alive(): boolean {
    return this.#dead === undefined;
  }

  /** Parks the thread: it ends after `idleMs` unless {@link PooledThread.wake} comes first. */
  sleep(idleMs: number): void {
    this.#idleTimer = setTimeout(() => void this.end().catch(() => undefined), idleMs);
    this.#idleTimer.unref();
  }

  wake(): void {
    clearTimeout(this.#idleTimer);
  }

  /** Terminates the thread, stopping whatever it runs. */
  async end(): Promise<void> {
    this.#dead ??= new ThreadFailedError('the thread was terminated', undefined);
    await this.#worker.terminate();
  }

  #die(error: Error): void {
    this.#dead ??= error;
    this.#fail?.(this.#dead);
  }
}
