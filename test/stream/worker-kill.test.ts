import { describe, expect, it } from 'vitest';
import type { StreamItem } from '../../src/contract/stream-event.js';
import { deferred } from '../support/deferred.js';
import { pidRunningActivity, useProcessFixtures, victimAndSurvivors } from '../support/process/fixture.js';
import { reply } from '../support/scripted-model.js';
import { offsetProblems, shownText } from './shown-text.js';

// Heartbeat timeout of the runs here: how long Temporal waits before it gives a dead worker's task away.
const HEARTBEAT_SECONDS = 2;
const ANSWER = 'one two three four five six seven eight nine ten eleven twelve';

const { setUp } = useProcessFixtures();

describe.each(['foreground', 'background'] as const)(
  'a worker SIGKILLed mid-stream (%s model mode)',
  (modelMode) => {
    it('shows the caller the turn once: the text so far, a reset, then the whole turn from the retry', async () => {
      const resume = deferred();
      const held = reply.streamed(reply.text(ANSWER), { pauseAfter: 4, resume: resume.promise });
      // In foreground mode the retry asks again; in background mode it re-attaches to the same response.
      const { model, fixture } = await setUp(
        modelMode === 'foreground' ? [held, reply.text(ANSWER)] : [held],
      );
      const workers = await Promise.all([
        fixture.startWorker({ modelMode }),
        fixture.startWorker({ modelMode }),
      ]);
      const runId = await fixture.keel.startRun({
        task: 'count',
        heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
      });

      const items: StreamItem[] = [];
      const sawText = deferred();
      // Follows the stream throughout; a failure is kept (not left unhandled) and thrown at the end.
      const following = (async (): Promise<Error | undefined> => {
        for await (const item of fixture.keel.stream(runId)) {
          items.push(item);
          if (item.event.type === 'text') sawText.resolve();
        }
        return undefined;
      })().catch((error: unknown) => error as Error);
      await Promise.race([sawText.promise, following]);
      const [victim] = victimAndSurvivors(workers, await pidRunningActivity(fixture.keel, runId));
      await victim.kill();
      const killedAt = Date.now();
      if (modelMode === 'background') await model.waitUntil(() => model.streamRetrievals.length > 0);
      resume.resolve();
      const failure = await following;
      if (failure !== undefined) throw failure;

      expect(await fixture.keel.waitForResult(runId)).toMatchObject({
        status: 'completed',
        finalText: ANSWER,
      });
      const reset = items.findIndex(({ event }) => event.type === 'reset');
      const before = items
        .slice(0, reset)
        .map(({ event }) => (event.type === 'text' ? event.delta : ''))
        .join('');
      console.info(
        `[measure] ${modelMode}: caller saw ${JSON.stringify(before)} then a reset ${Date.now() - killedAt} ms ` +
          `after SIGKILL at most, then the turn again (heartbeat timeout ${HEARTBEAT_SECONDS} s)`,
      );
      expect(reset).toBeGreaterThan(0);
      expect(items[reset]?.event).toEqual({ type: 'reset', turn: 1, reason: 'retried' });
      expect(items.filter(({ event }) => event.type === 'reset')).toHaveLength(1);
      expect(ANSWER.startsWith(before)).toBe(true);
      expect(shownText(items)).toEqual([ANSWER]);
      expect(offsetProblems(items)).toEqual([]);
      if (modelMode === 'background') expect(model.requests).toHaveLength(1);
    });
  },
);
