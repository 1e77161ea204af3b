import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { KeelClient } from '../../../src/client.js';
import { connectTestServer, TEST_API_KEY, temporaryWorkspace } from '../harness.js';
import type { TestServer } from '../harness.js';
import { ScriptedModel } from '../scripted-model.js';
import { WorkerProcess } from './control.js';
import type { WorkerProcessOptions } from './control.js';

/** A task queue, workspace and state directory shared by the worker processes of one test. */
export interface ProcessFixture {
  taskQueue: string;
  workspace: string;
  stateDirectory: string;
  keel: KeelClient;
  /** Starts another worker process on this fixture's task queue. */
  startWorker(overrides?: Partial<WorkerProcessOptions>): Promise<WorkerProcess>;
  /** Every worker process started so far (the test kills what is still running at the end). */
  workers: WorkerProcess[];
  /** Kills every worker process still running. */
  cleanUp(): Promise<void>;
}

/** Sets up worker processes that talk to the test run's dev server and to `model`. */
export async function processFixture(server: TestServer, model: ScriptedModel): Promise<ProcessFixture> {
  const taskQueue = `keel-process-${randomUUID()}`;
  const workspace = await temporaryWorkspace();
  const stateDirectory = await mkdtemp(path.join(tmpdir(), 'keel-state-'));
  const workers: WorkerProcess[] = [];
  return {
    taskQueue,
    workspace,
    stateDirectory,
    workers,
    keel: new KeelClient(server.client, taskQueue),
    async startWorker(overrides = {}) {
      const worker = await WorkerProcess.start({
        temporalAddress: inject('temporalAddress'),
        namespace: inject('temporalNamespace'),
        taskQueue,
        modelUrl: model.url,
        apiKey: TEST_API_KEY,
        workspace,
        stateDirectory,
        bundlePath: inject('workflowBundlePath'),
        ...overrides,
      });
      workers.push(worker);
      return worker;
    },
    async cleanUp() {
      const running = workers.filter(
        (worker) => worker.child.exitCode === null && worker.child.signalCode === null,
      );
      await Promise.all(running.map((worker) => worker.kill()));
    },
  };
}

/** The process id of the worker that runs the run's pending activity (from its `pid@host` identity). */
export async function pidRunningActivity(keel: KeelClient, runId: string): Promise<number> {
  for (;;) {
    const description = await keel.temporal.workflow.getHandle(runId).describe();
    const identity = description.raw.pendingActivities?.find(
      (activity) => activity.lastWorkerIdentity,
    )?.lastWorkerIdentity;
    const pid = Number.parseInt(identity?.split('@')[0] ?? '', 10);
    if (Number.isInteger(pid)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Splits a fixture's workers into the one with `pid` and the others. */
export function victimAndSurvivors(
  workers: readonly WorkerProcess[],
  pid: number,
): [WorkerProcess, WorkerProcess[]] {
  const victim = workers.find((worker) => worker.pid === pid);
  if (victim === undefined) throw new Error(`no worker process has pid ${pid}`);
  return [victim, workers.filter((worker) => worker !== victim)];
}

/**
 * Waits until the run's pending model activity has recorded a heartbeat with a response id, i.e. until
 * the server knows which background response a retry must re-attach to. Polls `describe`.
 */
export async function waitForRecordedResponseId(keel: KeelClient, runId: string): Promise<string> {
  for (;;) {
    const description = await keel.temporal.workflow.getHandle(runId).describe();
    for (const activity of description.raw.pendingActivities ?? []) {
      const payload = activity.heartbeatDetails?.payloads?.[0];
      if (payload) {
        const details = defaultPayloadConverter.fromPayload<{ responseId?: string }>(payload);
        if (details.responseId) return details.responseId;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * For a test file whose tests run worker processes: connects to the dev server once, and after each
 * test kills the workers and closes the model server that `setUp` made.
 */
export function useProcessFixtures(): {
  setUp(
    script: Parameters<typeof ScriptedModel.start>[0],
  ): Promise<{ model: ScriptedModel; fixture: ProcessFixture }>;
} {
  let server: TestServer | undefined;
  let current: { model: ScriptedModel; fixture: ProcessFixture } | undefined;
  beforeAll(async () => {
    server = await connectTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await current?.fixture.cleanUp();
    await current?.model.close();
    current = undefined;
  });
  return {
    async setUp(script) {
      const model = await ScriptedModel.start(script);
      current = { model, fixture: await processFixture(server!, model) };
      return current;
    },
  };
}
