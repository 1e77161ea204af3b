import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTracingDisabled } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import type { OpenAIProviderOptions } from '@openai/agents-openai';
import { Client } from '@temporalio/client';
import { OpenAIAgentsPlugin } from '@temporalio/openai-agents';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createOpenAIClient } from '../../src/model/client.js';
import { silentLogger } from '../../test/support/loggers.js';
import type { BenchEnvironment } from '../support/environment.js';
import * as activities from './activities.js';

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));

// The Agents SDK's tracing would export spans to OpenAI; the benchmark has no network and wants none.
setTracingDisabled(true);

/** The plugin as its README sets it up, with the model served by the benchmark's scripted server. */
function agentsPlugin(modelUrl: string): OpenAIAgentsPlugin {
  return new OpenAIAgentsPlugin({
    modelProvider: new OpenAIProvider({
      // The same client Keel uses (no SDK retries); the package's CommonJS types name another copy of the class.
      openAIClient: createOpenAIClient({
        apiKey: 'sk-bench',
        baseURL: modelUrl,
      }) as unknown as OpenAIProviderOptions['openAIClient'],
      useResponses: true,
    }),
    // Keel's model activity timeout; the integration's retry defaults otherwise.
    modelParams: { startToCloseTimeout: '600s' },
  });
}

/** Builds the agent's workflow bundle once (the plugin adds its polyfills and interceptors). */
export async function bundleAgentsWorkflows(directory: string): Promise<string> {
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

/** A worker and a client for the `@temporalio/openai-agents` agent, on their own task queue. */
export interface AgentsBench {
  worker: Worker;
  taskQueue: string;
  /** The worker's own connection; close it after the worker has stopped. */
  connection: NativeConnection;
  /** Starts one run; returns its workflow id. */
  start(task: string, maxTurns: number): Promise<string>;
  /** Waits for a run's final text. */
  result(workflowId: string): Promise<string>;
}

/** Creates the `@temporalio/openai-agents` worker and client. */
export async function startAgentsWorker(
  environment: BenchEnvironment,
  options: { modelUrl: string; bundlePath: string },
): Promise<AgentsBench> {
  const plugin = agentsPlugin(options.modelUrl);
  const taskQueue = `agents-bench-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: environment.address });
  const worker = await Worker.create({
    connection,
    namespace: environment.namespace,
    taskQueue,
    activities,
    workflowBundle: { codePath: options.bundlePath },
    plugins: [plugin],
  });
  const client = new Client({
    connection: environment.client.connection,
    namespace: environment.namespace,
    plugins: [plugin],
  });
  return {
    worker,
    taskQueue,
    connection,
    async start(task, maxTurns) {
      const workflowId = `agents-bench-${randomUUID()}`;
      await client.workflow.start('agentsBenchRun', { taskQueue, workflowId, args: [task, maxTurns] });
      return workflowId;
    },
    result: (workflowId) => client.workflow.getHandle(workflowId).result() as Promise<string>,
  };
}
