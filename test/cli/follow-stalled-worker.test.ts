import { describe, expect, it } from 'vitest';
import { startCli, testServerCliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { useProcessFixtures, waitForRecordedResponseId } from '../support/process/fixture.js';
import { reply } from '../support/scripted-model.js';

const { setUp } = useProcessFixtures();

/** `promise`, or a rejection saying what did not happen within `milliseconds`. */
function within<T>(milliseconds: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${milliseconds} ms`)), milliseconds);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('keel follow, when the worker stops answering', () => {
  it('says the run waits for a worker instead of hanging on the query, and goes on when it answers again', async () => {
    const thinking = deferred();
    const { fixture } = await setUp([reply.held(reply.text('still here'), thinking.promise)]);
    const worker = await fixture.startWorker();
    const runId = await fixture.keel.startRun({ task: 'think' });
    await waitForRecordedResponseId(fixture.keel, runId);
    // A frozen worker never answers the state query, and the server holds such a query for 30 s.
    worker.freeze();
    const follow = startCli(['follow', runId, '--task-queue', fixture.taskQueue], {
      env: testServerCliEnvironment(),
    });
    try {
      // Not a speed goal: a bound below the server's 30 s, which following must not wait out.
      await within(
        25_000,
        follow.waitForOutput('… waiting for a worker'),
        'keel follow did not say it waits',
      );
    } finally {
      worker.thaw();
      thinking.resolve();
    }
    expect(await follow.exited).toBe(0);
    expect(follow.stdout).toContain('still here');
    expect(follow.stdout).toContain('✔ completed');
  });
});
