import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_ATTEMPT_SIGNAL } from '../../src/contract/model-attempt.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { RecordingLogger } from '../support/loggers.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('a model attempt that times out', () => {
  it.each([
    ['foreground', /^Model turn 1, attempt 1 failed: ModelError\.Timeout: /u],
    [
      'background',
      /^Model turn 1, attempt 1: stopped, (it timed out|the server no longer knows the attempt)/u,
    ],
  ] as const)(
    'is said in the worker log as it happens (%s), and the retry answers',
    async (modelMode, said) => {
      const model = await ScriptedModel.start([reply.hang(), reply.text('second time lucky')]);
      const logger = new RecordingLogger();
      try {
        await withTestWorker(server, { model, logger, modelMode }, async ({ keel }) => {
          const runId = await keel.startRun({ task: 'answer', modelTimeoutSeconds: 2 });
          const result = await keel.waitForResult(runId);
          expect(result).toMatchObject({ status: 'completed', finalText: 'second time lucky' });
        });
        const warnings = logger.entries
          .filter((entry) => entry.level === 'warn')
          .map((entry) => entry.message);
        expect(warnings).toContainEqual(expect.stringMatching(said));
      } finally {
        await model.close();
      }
    },
  );
});

describe('a model turn tried again', () => {
  it("is said in the run's state query and current details while the retry works, and forgotten once it answers", async () => {
    const answer = deferred();
    // The first attempt fails at once; the second is held while the test looks, for as long as it
    // takes (the turn's timeout is the default ten minutes).
    const model = await ScriptedModel.start([
      reply.error(500, 'upstream fell over'),
      reply.held(reply.text('second time lucky'), answer.promise),
    ]);
    try {
      await withTestWorker(server, { model }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'answer' });
        const state = await waitForState(keel, runId, (seen) => seen.modelAttempt !== undefined);
        expect(Object.keys(state.modelAttempt!).sort()).toEqual(['attempt', 'maxAttempts', 'reason', 'turn']);
        expect(state.modelAttempt).toMatchObject({ turn: 1, attempt: 2, maxAttempts: 8 });
        expect(state.modelAttempt?.reason).toMatch(/^failed: .*upstream fell over/u);
        expect(state.phase).toBe('thinking');
        const metadata = await server.client.workflow
          .getHandle(runId)
          .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
        expect(metadata.currentDetails).toContain(
          `**Trying turn 1 again** (attempt 2 of 8): the last attempt ${state.modelAttempt!.reason}`,
        );

        // Anyone can send the signal: one that is not what a retry sends is refused visibly, not taken.
        await server.client.workflow.getHandle(runId).signal(MODEL_ATTEMPT_SIGNAL, { turn: 1, attempt: 1 });
        const refused = await waitForState(keel, runId, (seen) =>
          seen.events.some((event) => event.kind === 'refused'),
        );
        const refusal = refused.events.find((event) => event.kind === 'refused');
        expect(refusal?.kind === 'refused' && refusal.signal).toBe(MODEL_ATTEMPT_SIGNAL);
        expect(refusal?.kind === 'refused' && refusal.reason).toMatch(/attempt/u);
        expect(refused.modelAttempt).toEqual(state.modelAttempt);

        answer.resolve();
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'second time lucky',
        });
        const after = await keel.getRunState(runId);
        expect(after.modelAttempt).toBeUndefined();
        // One signal for the one retry (and the test's own): a first attempt costs nothing.
        const signals = (await historyEvents(server.client, runId)).filter(
          (event) => event.workflowExecutionSignaledEventAttributes?.signalName === MODEL_ATTEMPT_SIGNAL,
        );
        expect(signals).toHaveLength(2);
      });
    } finally {
      await model.close();
    }
  });
});
