import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import type { BuiltKeel } from './built-keel.js';
import { ChildWorker } from './child-worker.js';
import type { WorkerUsage } from './child-worker.js';

/** Where a built Keel worker polls and what it talks to. */
export interface DistWorkerOptions {
  built: BuiltKeel;
  address: string;
  namespace: string;
  modelUrl: string;
  /** A scratch directory for the worker's workspace and state. */
  directory: string;
  taskQueue?: string;
  /** Mark the no-op tool `local` (its calls run as local activities). */
  localTool?: boolean;
}

/** A running built worker and the task queue it polls. */
export interface DistWorker {
  worker: ChildWorker;
  ready: WorkerUsage;
  taskQueue: string;
}

/**
 * Starts `node dist/worker.js` (the Docker image's command) configured only by the environment, as an
 * operator configures it: Temporal's `TEMPORAL_ADDRESS`/`TEMPORAL_NAMESPACE`, the model server as
 * `OPENAI_BASE_URL`, the no-op tool as `KEEL_TOOLS_MODULE`; every other setting is Keel's default.
 */
export async function startDistWorker(options: DistWorkerOptions): Promise<DistWorker> {
  const taskQueue = options.taskQueue ?? `keel-bench-${randomUUID()}`;
  // The benchmark's own settings must not leak into the worker: it sees only what an operator sets.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(KEEL_|TEMPORAL_|OPENAI_|NODE_OPTIONS$)/.test(name)),
  );
  // KEEL_BENCH_CPU_PROFILE=<directory> writes a V8 CPU profile of each built worker there.
  const profile = process.env.KEEL_BENCH_CPU_PROFILE;
  const { worker, ready } = await ChildWorker.start({
    name: 'the built Keel worker (node dist/worker.js)',
    executable: process.execPath,
    args: [...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []), options.built.workerEntry],
    env: {
      ...inherited,
      TEMPORAL_ADDRESS: options.address,
      TEMPORAL_NAMESPACE: options.namespace,
      KEEL_TASK_QUEUE: taskQueue,
      KEEL_WORKSPACE: await mkdtemp(path.join(options.directory, 'workspace-')),
      KEEL_STATE_DIR: await mkdtemp(path.join(options.directory, 'state-')),
      KEEL_TOOLS_MODULE: options.built.toolsModule,
      KEEL_MODEL: 'bench-model',
      OPENAI_BASE_URL: options.modelUrl,
      OPENAI_API_KEY: 'sk-bench',
      ...(options.localTool ? { BENCH_NOOP_LOCAL: '1' } : {}),
    },
    ready: /Keel worker on task queue/,
  });
  return { worker, ready, taskQueue };
}
