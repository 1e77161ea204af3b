import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { inject } from 'vitest';
import { KeelClient } from '../../src/client.js';
import type { Logger } from '../../src/logger.js';
import { createOpenAIClient } from '../../src/model/client.js';
import type { ModelMode } from '../../src/model/config.js';
import type { RunLimits } from '../../src/contract/run-input.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { createKeelWorker } from '../../src/worker.js';
import type { KeelWorkerOptions } from '../../src/worker.js';
import type { ScriptedModel } from './scripted-model.js';

import { silentLogger } from './loggers.js';
import { reportRuns } from './run-report.js';

export { RecordingLogger } from './loggers.js';

/** The API key test workers send; tests check it never reaches history or the model. */
export const TEST_API_KEY = 'sk-test-4f9c2a7e1b8d3c6f';

/** Connections to the test run's Temporal dev server. */
export interface TestServer {
  connection: NativeConnection;
  client: Client;
  close(): Promise<void>;
}

/** Connects to the dev server that the global setup started. */
export async function connectTestServer(): Promise<TestServer> {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection, namespace });
  return {
    connection,
    client,
    async close() {
      await clientConnection.close();
      await connection.close();
    },
  };
}

// By connection, not once per process: a process runs many test files, and some start servers of their own.
const registered = new WeakMap<object, Promise<boolean>>();

/** Registers Keel's search attributes on the test server, once per connection, as a worker would. */
function registerSearchAttributes(server: TestServer): Promise<boolean> {
  const connection = server.client.connection;
  let done = registered.get(connection);
  if (done === undefined) {
    done = ensureSearchAttributes(connection, inject('temporalNamespace'), silentLogger);
    registered.set(connection, done);
  }
  return done;
}

/** A temporary directory to use as a workspace. */
export async function temporaryWorkspace(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'keel-workspace-'));
}

/** Options for {@link startTestWorker}. */
export interface TestWorkerOptions {
  model: ScriptedModel;
  tools?: readonly Tool[];
  workspace?: string;
  /** One workspace per run instead of the shared `workspace` (then none is made for the worker). */
  runWorkspaces?: KeelWorkerOptions['runWorkspaces'];
  /** The worker's state directory (side-effect records); a fresh temporary one when absent. */
  stateDirectory?: string;
  taskQueue?: string;
  logger?: Logger;
  secrets?: readonly string[];
  defaultModel?: string;
  /** Limits for runs that set none, as `KEEL_MAX_TURNS` and friends give them. */
  limits?: Partial<RunLimits>;
  /** Whether runs set Keel's search attributes; registered on the test server once per process when absent. */
  searchAttributes?: boolean;
  /** Background unless a test says otherwise: the production default for the OpenAI API. */
  modelMode?: ModelMode;
  workerOptions?: Partial<WorkerOptions>;
  /** The operator's budgets, prices and model pacing, as `KEEL_MAX_TOTAL_TOKENS` and friends give them. */
  budgets?: KeelWorkerOptions['budgets'];
  prices?: KeelWorkerOptions['prices'];
  modelPacing?: KeelWorkerOptions['modelPacing'];
  /** How runs that name none keep their conversation, as `KEEL_CONVERSATION` gives it. */
  conversation?: KeelWorkerOptions['conversation'];
  /** The most output tokens a turn may spend, as `KEEL_MAX_OUTPUT_TOKENS` gives it. */
  maxOutputTokens?: KeelWorkerOptions['maxOutputTokens'];
  /** Named agents the worker offers. */
  agents?: KeelWorkerOptions['agents'];
}

/**
 * How the tests' own workers run workflows: on the test process's thread, in the same sandbox (the
 * SDK's `debugMode`), not on a worker thread of their own. Each worker thread loads the SDK again
 * and compiles the bundle: about 0.5 s of CPU for every worker a test starts, 16% of the CPU of
 * the workflow tests. What users run (`keel worker`, `keel run`, the image) keeps its worker thread
 * (and the SDK's limit on a workflow task's CPU time, off here): the tests that start those
 * processes prove it, and so do the files that call `createKeelWorker` themselves
 * (`test/workflows/agents.test.ts`).
 */
export const IN_PROCESS_WORKER = { debugMode: true } satisfies Partial<WorkerOptions>;

/** A Keel worker on its own task queue, talking to the scripted model through the real `openai` SDK. */
export async function startTestWorker(
  server: TestServer,
  options: TestWorkerOptions,
): Promise<{
  worker: Worker;
  taskQueue: string;
  keel: KeelClient;
}> {
  const taskQueue = options.taskQueue ?? `keel-test-${randomUUID()}`;
  const worker = await createKeelWorker({
    connection: server.connection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    ...(options.runWorkspaces
      ? { runWorkspaces: options.runWorkspaces }
      : { workspace: options.workspace ?? (await temporaryWorkspace()) }),
    stateDirectory: options.stateDirectory ?? (await mkdtemp(path.join(tmpdir(), 'keel-state-'))),
    openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: options.model.url }),
    defaultModel: options.defaultModel ?? 'scripted-model',
    modelMode: options.modelMode ?? 'background',
    searchAttributes: options.searchAttributes ?? (await registerSearchAttributes(server)),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.conversation ? { conversation: options.conversation } : {}),
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
    pollSchedule: { initialMs: 20, maxMs: 100 },
    tools: options.tools ?? fileTools,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    workerOptions: { ...IN_PROCESS_WORKER, ...options.workerOptions },
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...(options.modelPacing ? { modelPacing: options.modelPacing } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
  });
  return { worker, taskQueue, keel: new KeelClient(server.client, taskQueue) };
}

/** Runs `body` while a test worker polls; the worker is shut down afterwards. */
export async function withTestWorker<T>(
  server: TestServer,
  options: TestWorkerOptions,
  body: (context: { keel: KeelClient; taskQueue: string; worker: Worker }) => Promise<T>,
): Promise<T> {
  const context = await startTestWorker(server, options);
  return context.worker.runUntil(
    body(context).catch(async (error: unknown) => {
      // A test that timed out waiting says where its runs stood on the server, as they were then
      // (before the worker's shutdown cancels what it runs), not only what it saw.
      if (error instanceof Error)
        error.message += `\nThe runs on ${context.taskQueue}:\n${await reportRuns(server.client, context.taskQueue)}`;
      throw error;
    }),
  );
}
