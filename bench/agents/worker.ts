import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { silentLogger } from '../../test/support/loggers.js';
import { ChildWorker } from '../support/child-worker.js';
import type { WorkerUsage } from '../support/child-worker.js';
import type { BenchEnvironment } from '../support/environment.js';
import { agentsPlugin } from './plugin.js';
import type { AgentsWorkerConfig } from './worker-main.js';

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));
const workerMain = fileURLToPath(new URL('./worker-main.ts', import.meta.url));

/** Bundles already built, by directory: the per-step and concurrency benchmarks share one. */
const bundles = new Map<string, Promise<string>>();

/** The agent's workflow bundle in `directory`, built once (the plugin adds its polyfills and interceptors). */
export function bundleAgentsWorkflows(directory: string): Promise<string> {
  const existing = bundles.get(directory);
  if (existing !== undefined) return existing;
  const bundle = buildAgentsBundle(directory);
  bundles.set(directory, bundle);
  return bundle;
}

async function buildAgentsBundle(directory: string): Promise<string> {
  const bundlePath = path.join(directory, 'agents-workflows.js');
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    plugins: [agentsPlugin('http://127.0.0.1:1/v1')],
    // Some module of the Agents SDK references `import.meta.url`, for which webpack wants a public path.
    webpackConfigHook: (config) => ({
      ...config,
      output: { ...config.output, publicPath: '', globalObject: 'globalThis' },
    }),
    logger: silentLogger,
  });
  await writeFile(bundlePath, bundle.code);
  return bundlePath;
}

/** The `@temporalio/openai-agents` agent's worker process and a client for it, on their own task queue. */
export interface AgentsBench {
  worker: ChildWorker;
  /** The worker's usage once it was ready. */
  ready: WorkerUsage;
  taskQueue: string;
  /** Starts one run; returns its workflow id. */
  start(task: string, maxTurns: number): Promise<string>;
  /** Waits for a run's final text. */
  result(workflowId: string): Promise<string>;
}

/**
 * Starts the agent's worker in its own process (`worker-main.ts`, loaded through tsx: the comparison
 * has no build of its own; the loader costs start-up time, not time per step) and a client for it.
 */
export async function startAgentsWorker(
  environment: BenchEnvironment,
  options: { modelUrl: string; bundlePath: string },
): Promise<AgentsBench> {
  const taskQueue = `agents-bench-${randomUUID()}`;
  const config: AgentsWorkerConfig = {
    address: environment.address,
    namespace: environment.namespace,
    taskQueue,
    modelUrl: options.modelUrl,
    bundlePath: options.bundlePath,
  };
  const profile = process.env.KEEL_BENCH_CPU_PROFILE;
  const { worker, ready } = await ChildWorker.start({
    name: 'the @temporalio/openai-agents worker',
    executable: process.execPath,
    args: ['--import', 'tsx', ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []), workerMain],
    env: { ...process.env, AGENTS_BENCH_WORKER: JSON.stringify(config) },
    ready: /agents worker ready/,
  });
  const client = new Client({
    connection: environment.client.connection,
    namespace: environment.namespace,
    plugins: [agentsPlugin(options.modelUrl)],
  });
  return {
    worker,
    ready,
    taskQueue,
    async start(task, maxTurns) {
      const workflowId = `agents-bench-${randomUUID()}`;
      await client.workflow.start('agentsBenchRun', { taskQueue, workflowId, args: [task, maxTurns] });
      return workflowId;
    },
    result: (workflowId) => client.workflow.getHandle(workflowId).result() as Promise<string>,
  };
}
