import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { processCpuSeconds, processPeakRssMiB, processRssMiB } from './process-usage.js';

/** A worker process's resource use so far, from `/proc`. */
export interface WorkerUsage {
  cpuSeconds: number;
  rssMiB: number;
  /** Highest resident memory of the process's life (`VmHWM`). */
  peakRssMiB: number;
}

/** How to start a worker process and know it polls. */
export interface ChildWorkerCommand {
  /** What the worker is, for errors (`Keel dist worker`). */
  name: string;
  executable: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** A line on its stdout that says the worker is about to poll. */
  ready: RegExp;
}

/**
 * A worker in a process of its own, measured from outside (`/proc`), as an operator would see it;
 * stopped with SIGTERM, which Temporal's runtime turns into a graceful shutdown.
 */
/** How long a worker process may take to say it is ready (a cold start with a bundle takes ~10 s). */
const READY_TIMEOUT_MS = 120_000;

export class ChildWorker {
  readonly exited: Promise<number | null>;
  /** The last lines it wrote, for a failure's message. */
  readonly #output: string[] = [];

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const keep = (chunk: Buffer): void => {
      this.#output.push(chunk.toString('utf8'));
      if (this.#output.length > 40) this.#output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /** The process id. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Starts the process; resolves with it and its usage once it said it is ready. */
  static async start(command: ChildWorkerCommand): Promise<{ worker: ChildWorker; ready: WorkerUsage }> {
    const child = spawn(command.executable, command.args, {
      env: command.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new ChildWorker(command.name, child);
    await new Promise<void>((resolve, reject) => {
      // A worker that neither gets ready nor exits would hang the benchmark, and outlive it.
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(`${command.name} was not ready after ${READY_TIMEOUT_MS / 1000} s:\n${worker.output()}`),
        );
      }, READY_TIMEOUT_MS);
      let seen = '';
      const watch = (chunk: Buffer): void => {
        seen = (seen + chunk.toString('utf8')).slice(-4096);
        if (command.ready.test(seen)) {
          child.stdout?.off('data', watch);
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', watch);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${command.name} exited with ${code} before it was ready:\n${worker.output()}`));
      });
    });
    return { worker, ready: await worker.usage() };
  }

  /** What it wrote last. */
  output(): string {
    return this.#output.join('');
  }

  /** CPU time and memory so far. */
  async usage(): Promise<WorkerUsage> {
    const [cpuSeconds, rssMiB, peakRssMiB] = await Promise.all([
      processCpuSeconds(this.pid),
      processRssMiB(this.pid),
      processPeakRssMiB(this.pid),
    ]);
    if (cpuSeconds === undefined || rssMiB === undefined || peakRssMiB === undefined)
      throw new Error(`cannot read /proc/${this.pid} of ${this.name}`);
    return { cpuSeconds, rssMiB, peakRssMiB };
  }

  /** SIGTERM, then SIGKILL if it has not exited within 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timeout = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timeout);
  }
}
