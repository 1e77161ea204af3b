import { describe, expect, it } from 'vitest';
import type { KeelClient } from '../../src/client.js';
import { deferred } from '../support/deferred.js';
import {
  pidRunningActivity,
  useProcessFixtures,
  victimAndSurvivors,
  waitForRecordedResponseId,
} from '../support/process/fixture.js';
import { reply } from '../support/scripted-model.js';

// Heartbeat timeout of the runs here: how long a frozen worker may stay silent before its attempt times out.
const HEARTBEAT_SECONDS = 2;

const { setUp } = useProcessFixtures();

/** Waits until the run's model turn has been started again by the worker with `pid` (a retry). */
async function waitForAttemptOn(keel: KeelClient, runId: string, pid: number): Promise<number> {
  for (;;) {
    const description = await keel.temporal.workflow.getHandle(runId).describe();
    const activity = description.raw.pendingActivities?.find((pending) =>
      pending.lastWorkerIdentity?.startsWith(`${pid}@`),
    );
    if (activity?.attempt) return activity.attempt;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a background turn whose attempt timed out while the run goes on', () => {
  it('leaves the response to the retry: the stalled worker does not cancel it, so the turn is paid once', async () => {
    const generation = deferred();
    // Any create after the first is a turn paid again (the held response was cancelled under the retry).
    const { model, fixture } = await setUp((request) =>
      request.index === 0
        ? reply.held(reply.text('the answer'), generation.promise)
        : reply.text('paid again'),
    );
    // A long grace, so a SIGTERM lets the stalled worker finish its attempt (and decide about the cancel);
    // one activity slot, so the frozen worker has no poll open to swallow a retry.
    const workers = await Promise.all([
      fixture.startWorker({ shutdownGraceSeconds: 30, maxConcurrentActivities: 1 }),
      fixture.startWorker({ shutdownGraceSeconds: 30, maxConcurrentActivities: 1 }),
    ]);
    const runId = await fixture.keel.startRun({ task: 'think', heartbeatTimeoutSeconds: HEARTBEAT_SECONDS });
    expect(await waitForRecordedResponseId(fixture.keel, runId)).toBe('resp_1');
    const [stalled, [other]] = victimAndSurvivors(workers, await pidRunningActivity(fixture.keel, runId));

    // A hung host: the attempt times out on the server while the stalled worker still holds it.
    stalled.freeze();
    const pollsBefore = model.retrievals.length;
    const attempt = await waitForAttemptOn(fixture.keel, runId, other!.pid);
    await model.waitUntil(() => model.retrievals.length > pollsBefore);

    // Back to life: its next heartbeat hears NOT_FOUND, for its attempt only; the run is still running.
    // SIGTERM with a long grace: the worker exits once that attempt has ended, its cancel decided.
    stalled.thaw();
    stalled.terminate();
    await stalled.exited;
    generation.resolve();

    const result = await fixture.keel.waitForResult(runId);
    console.info(
      `[measure] attempt timed out under a frozen worker (retry attempt ${attempt}): ` +
        `creates ${model.requests.length}, cancels ${model.cancellations.length}`,
    );
    expect(result).toMatchObject({ status: 'completed', finalText: 'the answer' });
    expect(model.cancellations).toEqual([]);
    expect(model.requests).toHaveLength(1);
    expect(model.retrievals.slice(pollsBefore).every((id) => id === 'resp_1')).toBe(true);
  });
});

describe('a background turn of a run that ended without a cancel', () => {
  it('is cancelled on the model server when the run is terminated', async () => {
    const never = new Promise<never>(() => undefined);
    const { model, fixture } = await setUp([reply.held(reply.text('too late'), never)]);
    await fixture.startWorker();
    const runId = await fixture.keel.startRun({ task: 'think', heartbeatTimeoutSeconds: HEARTBEAT_SECONDS });
    expect(await waitForRecordedResponseId(fixture.keel, runId)).toBe('resp_1');

    // Terminating requests no cancel: the turn hears only NOT_FOUND, and must find the run closed.
    await fixture.keel.temporal.workflow.getHandle(runId).terminate('test: the run is gone');
    await model.waitUntil(() => model.cancellations.length > 0);
    expect(model.cancellations).toEqual(['resp_1']);
    expect(model.requests).toHaveLength(1);
  });
});
