/**
 * The live stream on the real Temporal server on PostgreSQL: a subscriber in a process of its own
 * (`keel follow --stream`) follows a run whose worker is SIGKILLed mid-turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_ATTEMPT_SIGNAL } from '../../src/contract/model-attempt.js';
import { StreamItem } from '../../src/contract/stream-event.js';
import { cliEnvironment, startCli } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { pidRunningActivity, victimAndSurvivors } from '../support/process/fixture.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { offsetProblems, shownText } from '../stream/shown-text.js';
import { Cluster, CLUSTER_NAMESPACE } from './support/cluster.js';

const ANSWER = 'one two three four five six seven eight nine ten eleven twelve';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await Cluster.start();
});
afterAll(async () => {
  await cluster?.close();
});

describe('a subscriber in another process', () => {
  it('gets every delta in order, a reset after the worker is SIGKILLed, then the turn from the retry', async () => {
    const resume = deferred();
    const model = await ScriptedModel.start([
      reply.streamed(reply.text(ANSWER), { pauseAfter: 4, resume: resume.promise }),
      reply.streamed(reply.text(ANSWER), { deltaMs: 20 }),
    ]);
    try {
      const workers = await Promise.all([
        cluster.startWorker(model.url, { modelMode: 'foreground' }),
        cluster.startWorker(model.url, { modelMode: 'foreground' }),
      ]);
      const runId = await cluster.keel.startRun({ task: 'count', heartbeatTimeoutSeconds: 2 });
      const reader = startCli(['follow', runId, '--stream'], {
        env: cliEnvironment({
          TEMPORAL_ADDRESS: cluster.server.address,
          TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE,
          KEEL_TASK_QUEUE: cluster.taskQueue,
        }),
      });
      await reader.waitForOutput('"delta":"one two three four "');
      const [victim] = victimAndSurvivors(workers, await pidRunningActivity(cluster.keel, runId));
      await victim.kill();
      resume.resolve();
      expect(await reader.exited, reader.stderr).toBe(0);
      expect(await cluster.keel.waitForResult(runId)).toMatchObject({
        status: 'completed',
        finalText: ANSWER,
      });

      const items = reader.stdout
        .trim()
        .split('\n')
        .map((line) => StreamItem.parse(JSON.parse(line)));
      const reset = items.findIndex(({ event }) => event.type === 'reset');
      const before = items
        .slice(0, reset)
        .map(({ event }) => (event.type === 'text' ? event.delta : ''))
        .join('');
      expect(before).toBe('one two three four ');
      expect(items[reset]?.event).toEqual({ type: 'reset', turn: 1, reason: 'retried' });
      expect(items.filter(({ event }) => event.type === 'reset')).toHaveLength(1);
      expect(shownText(items)).toEqual([ANSWER]);
      expect(offsetProblems(items)).toEqual([]);
      expect(items.at(-1)?.event).toEqual({ type: 'end', status: 'completed' });
      // Nothing of the stream went through history: the one signal is the retry's word to its run.
      const history = await cluster.keel.temporal.workflow.getHandle(runId).fetchHistory();
      const signals = (history.events ?? []).flatMap((event) => {
        const name = event.workflowExecutionSignaledEventAttributes?.signalName;
        return typeof name === 'string' ? [name] : [];
      });
      expect(signals).toEqual([MODEL_ATTEMPT_SIGNAL]);
    } finally {
      await model.close();
    }
  });
});
