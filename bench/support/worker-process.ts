import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerOptions } from '@temporalio/worker';

const entry = fileURLToPath(new URL('./worker-process-main.ts', import.meta.url));

/** What the worker process is told at start. */
export interface WorkerProcessConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  modelUrl: string;
  bundlePath: string;
  searchAttributes: boolean;
  /** `Worker.create` options to try (cache size, concurrency limits), passed to `createKeelWorker`. */
  workerOptions: Partial<WorkerOptions>;
}

/** The worker process's resource use so far. */
export interface WorkerUsage {
  cpuSeconds: number;
  rssMiB: number;
  /** Highest resident memory of the process's life. */
  peakRssMiB: number;
}

/** Messages between the benchmark and the worker process. */
export type WorkerProcessMessage = { type: 'usage' } | { type: 'stop' };
type WorkerProcessReply = { type: 'ready' | 'usage'; usage: WorkerUsage };

/** A Keel worker running in a child process (see `worker-process-main.ts`). */
export class BenchWorkerProcess {
  readonly #waiting: Array<(usage: WorkerUsage) => void> = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.on('message', (message: WorkerProcessReply) => {
      if (message.type === 'usage') this.#waiting.shift()?.(message.usage);
    });
  }

  /** Starts the process; resolves with it and its usage once the worker polls. */
  static async start(
    config: WorkerProcessConfig,
  ): Promise<{ process: BenchWorkerProcess; ready: WorkerUsage }> {
    // KEEL_BENCH_CPU_PROFILE=<directory> writes a V8 CPU profile of the worker process there.
    const profile = process.env.KEEL_BENCH_CPU_PROFILE;
    const child = fork(entry, [], {
      execArgv: ['--import', 'tsx', ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : [])],
      env: { ...process.env, KEEL_BENCH_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker = new BenchWorkerProcess(child);
    const ready = await new Promise<WorkerUsage>((resolve, reject) => {
      child.on('message', (message: WorkerProcessReply) => {
        if (message.type === 'ready') resolve(message.usage);
      });
      child.once('exit', (code) =>
        reject(new Error(`the worker process exited with ${code} before it was ready`)),
      );
    });
    return { process: worker, ready };
  }

  /** The process's CPU time and memory so far. */
  usage(): Promise<WorkerUsage> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.child.send({ type: 'usage' } satisfies WorkerProcessMessage);
    });
  }

  /** Shuts the worker down gracefully and waits for the process to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.send({ type: 'stop' } satisfies WorkerProcessMessage);
    const timeout = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timeout);
  }
}
