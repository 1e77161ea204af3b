import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KeelClient } from '../../src/client.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { temporaryWorkspace, withTestWorker } from './harness.js';
import type { TestServer, TestWorkerOptions } from './harness.js';
import { ScriptedModel } from './scripted-model.js';
import type { Script } from './scripted-model.js';

/** Options for {@link withScenario}: the test worker's, and whether the run must use up the script. */
export type ScenarioOptions = Omit<TestWorkerOptions, 'model'> & {
  /** Fail unless the run asked for exactly the scripted turns; the default for a list of steps. */
  allStepsUsed?: boolean;
};

/** What a scenario's body works with: the model, the worker on its own task queue, and a client for it. */
export interface Scenario {
  /** A client for the worker's task queue. */
  keel: KeelClient;
  /** The worker's task queue, unique to this scenario. */
  taskQueue: string;
  /** The worker's workspace: a fresh temporary directory unless the options name one. */
  workspace: string;
  /** The scripted model the worker talks to, through the real `openai` SDK; `model.requests` is what reached it. */
  model: ScriptedModel;
  /** Starts a run on the worker's task queue and waits for its result. */
  run(...start: Parameters<KeelClient['startRun']>): Promise<{ runId: string; result: RunResult }>;
}

/**
 * Runs `body` with a scripted model answering `script` and a Keel test worker talking to it, on a
 * unique task queue with a temporary workspace and state directory. Afterwards the worker is shut
 * down, the script is checked (see {@link ScenarioOptions.allStepsUsed}), the model is closed and the
 * temporary directories are removed.
 */
export async function withScenario<T>(
  server: TestServer,
  script: Script,
  options: ScenarioOptions,
  body: (scenario: Scenario) => Promise<T>,
): Promise<T> {
  const { allStepsUsed = Array.isArray(script), ...workerOptions } = options;
  const created: string[] = [];
  const temporary = async (make: () => Promise<string>): Promise<string> => {
    const directory = await make();
    created.push(directory);
    return directory;
  };
  try {
    const workspace = workerOptions.workspace ?? (await temporary(temporaryWorkspace));
    const stateDirectory =
      workerOptions.stateDirectory ?? (await temporary(() => mkdtemp(path.join(tmpdir(), 'keel-state-'))));
    const model = await ScriptedModel.start(script);
    try {
      const result = await withTestWorker(
        server,
        { ...workerOptions, workspace, stateDirectory, model },
        ({ keel, taskQueue }) =>
          body({
            keel,
            taskQueue,
            workspace,
            model,
            async run(...start) {
              const runId = await keel.startRun(...start);
              return { runId, result: await keel.waitForResult(runId) };
            },
          }),
      );
      if (allStepsUsed) model.assertDone();
      return result;
    } finally {
      await model.close();
    }
  } finally {
    await Promise.all(created.map((directory) => rm(directory, { recursive: true, force: true })));
  }
}
