import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { EVENT_PREFIX } from './events.js';
import type { ProcessEvent } from './events.js';
import { RELEASE_DIRECTORY } from './tools.js';

const sourceEntry = fileURLToPath(new URL('./worker-main.ts', import.meta.url));

/**
 * How a worker process starts: the compiled worker the global set-up made (plain Node on the built
 * package), else worker-main.ts through tsx (the cluster suite, which has no built copy).
 */
function workerCommand(): string[] {
  let compiled: string | undefined;
  try {
    compiled = inject('processWorkerEntry');
  } catch {
    // Outside vitest (`npm run bench` starts workers through this file too): there is no set-up.
    compiled = undefined;
  }
  return compiled === undefined ? ['--import', 'tsx', sourceEntry] : [compiled];
}

/** Settings of a worker process, as environment variables of the production configuration. */
export interface WorkerProcessOptions {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  modelUrl: string;
  apiKey: string;
  workspace: string;
  stateDirectory: string;
  bundlePath: string;
  modelMode?: 'background' | 'foreground';
  shutdownGraceSeconds?: number;
  /**
   * Activities the worker runs at once. A worker whose slots are all busy does not poll for more, so a
   * frozen worker with one slot cannot swallow the retries of the activity it holds.
   */
  maxConcurrentActivities?: number;
  /** More variables of the production configuration (`KEEL_IDEMPOTENCY_STORE`, `KEEL_WORKSPACE_MODE`, ...). */
  environment?: Record<string, string>;
}

/** A worker running in a child process, which a test can kill, stop and listen to. */
export class WorkerProcess {
  readonly events: ProcessEvent[] = [];
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters: Array<{
    match: (event: ProcessEvent) => boolean;
    resolve: (event: ProcessEvent) => void;
  }> = [];
  readonly #listeners: Array<(event: ProcessEvent) => void> = [];

  private constructor(
    readonly child: ChildProcess,
    /** What it was started with (its workspace, state directory, ...). */
    readonly options: WorkerProcessOptions,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(line));
    createInterface({ input: child.stderr! }).on('line', (line) => this.keep(line));
  }

  /** Starts a worker process and waits until it polls its task queue. */
  static async start(options: WorkerProcessOptions): Promise<WorkerProcess> {
    const child = spawn(process.execPath, workerCommand(), {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: options.temporalAddress,
        TEMPORAL_NAMESPACE: options.namespace,
        KEEL_TASK_QUEUE: options.taskQueue,
        OPENAI_BASE_URL: options.modelUrl,
        OPENAI_API_KEY: options.apiKey,
        KEEL_MODEL: 'scripted-model',
        KEEL_MODEL_MODE: options.modelMode ?? 'background',
        // The OpenAI API's defaults, which these workers test: the scripted model keeps conversations as it does.
        KEEL_CONVERSATION: 'chained',
        ...(options.environment?.KEEL_WORKSPACE_MODE === 'per-run'
          ? {}
          : { KEEL_WORKSPACE: options.workspace }),
        KEEL_STATE_DIR: options.stateDirectory,
        KEEL_SHUTDOWN_GRACE_SECONDS: String(options.shutdownGraceSeconds ?? 0),
        KEEL_TEST_BUNDLE: options.bundlePath,
        ...(options.maxConcurrentActivities !== undefined && {
          KEEL_TEST_MAX_ACTIVITIES: String(options.maxConcurrentActivities),
        }),
        ...options.environment,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child, options);
    const ready = worker.waitFor((event) => event.type === 'worker-ready');
    const failed = worker.exited.then(({ code }) => {
      throw new Error(
        `worker process exited with ${code} before it was ready:\n${worker.output.slice(-20).join('\n')}`,
      );
    });
    await Promise.race([ready, failed]);
    return worker;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the first event (already seen or still to come) that matches. */
  waitFor(match: (event: ProcessEvent) => boolean): Promise<ProcessEvent> {
    const seen = this.events.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** Calls `listener` with every event from now on. */
  subscribe(listener: (event: ProcessEvent) => void): void {
    this.#listeners.push(listener);
  }

  /** Kills the process with SIGKILL (a crash: nothing is cleaned up) and waits until it is gone. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Freezes the process with SIGSTOP: it holds its tasks but can neither work nor heartbeat (a hung host). */
  freeze(): void {
    this.child.kill('SIGSTOP');
  }

  /** Lets a frozen process go on (SIGCONT), with whatever timers and tasks it held. */
  thaw(): void {
    this.child.kill('SIGCONT');
  }

  /** Sends SIGTERM (a graceful shutdown) without waiting. */
  terminate(): void {
    this.child.kill('SIGTERM');
  }

  private onLine(line: string): void {
    if (!line.startsWith(EVENT_PREFIX)) return this.keep(line);
    const event = JSON.parse(line.slice(EVENT_PREFIX.length)) as ProcessEvent;
    this.events.push(event);
    for (const listener of this.#listeners) listener(event);
    for (const waiter of this.#waiters.filter((candidate) => candidate.match(event))) {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  }

  private keep(line: string): void {
    this.output.push(line);
    if (this.output.length > 200) this.output.shift();
  }
}

/** Lets a `step` or `charge` tool waiting on `label` in this workspace finish. */
export async function release(workspace: string, label: string): Promise<void> {
  await mkdir(path.join(workspace, RELEASE_DIRECTORY), { recursive: true });
  await writeFile(path.join(workspace, RELEASE_DIRECTORY, label), '');
}
