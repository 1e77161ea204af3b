import type { KeelClient } from '../../src/client.js';
import { withTestWorker } from './harness.js';
import type { TestServer, TestWorkerOptions } from './harness.js';
import { ScriptedModel } from './scripted-model.js';
import type { ScriptPolicy, ScriptStep } from './scripted-model.js';

/**
 * Runs `body` with a scripted model answering `script` and a test worker talking to it; both are
 * gone afterwards. With `allStepsUsed` (the default for a list of steps), it also checks that the
 * run asked for exactly the scripted turns.
 */
export async function withScriptedWorker<T>(
  server: TestServer,
  script: ScriptStep[] | ScriptPolicy,
  options: Omit<TestWorkerOptions, 'model'> & { allStepsUsed?: boolean },
  body: (context: { keel: KeelClient; model: ScriptedModel; taskQueue: string }) => Promise<T>,
): Promise<T> {
  const { allStepsUsed = Array.isArray(script), ...workerOptions } = options;
  const model = await ScriptedModel.start(script);
  try {
    const result = await withTestWorker(server, { ...workerOptions, model }, ({ keel, taskQueue }) =>
      body({ keel, model, taskQueue }),
    );
    if (allStepsUsed) model.assertDone();
    return result;
  } finally {
    await model.close();
  }
}
