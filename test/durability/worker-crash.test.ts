import { describe, expect, it } from 'vitest';
import { deferred } from '../support/deferred.js';
import { release } from '../support/process/control.js';
import {
  pidRunningActivity,
  useProcessFixtures,
  victimAndSurvivors,
  waitForRecordedResponseId,
} from '../support/process/fixture.js';
import { expectToldOutcomeInDoubt, ledgerLines } from '../support/process/ledger.js';
import { reply } from '../support/scripted-model.js';

// Heartbeat timeout of the runs here: how long Temporal waits before it gives a dead worker's task away.
const HEARTBEAT_SECONDS = 2;

const { setUp } = useProcessFixtures();

function report(measure: string, milliseconds: number): void {
  console.info(`[measure] ${measure}: ${milliseconds} ms (heartbeat timeout ${HEARTBEAT_SECONDS} s)`);
}

describe('a worker killed with SIGKILL', () => {
  it('mid-tool: another worker runs the call again with the same idempotency key and the run completes', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'step', arguments: { label: 'a' } }),
      reply.text('finished'),
    ]);
    const workers = await Promise.all([fixture.startWorker(), fixture.startWorker()]);
    const runId = await fixture.keel.startRun({
      task: 'one step',
      heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
    });
    const started = await Promise.race(
      workers.map((worker) => worker.waitFor((event) => event.type === 'tool-started')),
    );
    const [victim, [survivor]] = victimAndSurvivors(workers, started.pid);
    await victim.kill();
    const killedAt = Date.now();
    const resumed = await survivor!.waitFor((event) => event.type === 'tool-started');
    report('tool call resumed on another worker after SIGKILL', resumed.at - killedAt);
    await release(fixture.workspace, 'a');

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({
      status: 'completed',
      finalText: 'finished',
      turns: 2,
    });
    expect(resumed.idempotencyKey).toBe(started.idempotencyKey);
    expect(resumed.idempotencyKey).toBe(`${runId}:call_1_1`);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.body.previous_response_id).toBe('resp_1');
    expect(model.requests[1]?.body.input).toEqual([
      { type: 'function_call_output', call_id: 'call_1_1', output: 'done:a' },
    ]);
  });

  it('mid-generation in background mode: the retry re-attaches, so the model server sees one create', async () => {
    const generation = deferred();
    const { model, fixture } = await setUp([reply.held(reply.text('the answer'), generation.promise)]);
    const workers = await Promise.all([fixture.startWorker(), fixture.startWorker()]);
    const runId = await fixture.keel.startRun({ task: 'think', heartbeatTimeoutSeconds: HEARTBEAT_SECONDS });
    expect(await waitForRecordedResponseId(fixture.keel, runId)).toBe('resp_1');
    const [victim] = victimAndSurvivors(workers, await pidRunningActivity(fixture.keel, runId));
    await victim.kill();
    const killedAt = Date.now();
    const pollsBeforeKill = model.retrievals.length;
    await model.waitUntil(() => model.retrievals.length > pollsBeforeKill);
    report('model turn re-attached on another worker after SIGKILL', Date.now() - killedAt);
    generation.resolve();

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({
      status: 'completed',
      finalText: 'the answer',
    });
    expect(model.requests).toHaveLength(1);
    expect(model.retrievals.slice(pollsBeforeKill).every((id) => id === 'resp_1')).toBe(true);
  });

  it('mid-request in foreground mode: the retry sends the request again and the run completes', async () => {
    const { model, fixture } = await setUp([reply.hang(), reply.text('second try')]);
    const workers = await Promise.all([
      fixture.startWorker({ modelMode: 'foreground' }),
      fixture.startWorker({ modelMode: 'foreground' }),
    ]);
    const runId = await fixture.keel.startRun({ task: 'think', heartbeatTimeoutSeconds: HEARTBEAT_SECONDS });
    await model.waitForRequests(1);
    const [victim] = victimAndSurvivors(workers, await pidRunningActivity(fixture.keel, runId));
    await victim.kill();
    const killedAt = Date.now();
    await model.waitForRequests(2);
    report('model request re-sent by another worker after SIGKILL', Date.now() - killedAt);

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({
      status: 'completed',
      finalText: 'second try',
    });
    expect(model.requests[1]?.body.input).toEqual(model.requests[0]?.body.input);
  });
});

describe('a side effect behind context.once', () => {
  it('happens once when the worker dies after recording it; the retry returns the first receipt', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'charge', arguments: { label: 'order-7', pause: 'after' } }),
      reply.text('charged'),
    ]);
    const first = await fixture.startWorker();
    const runId = await fixture.keel.startRun({
      task: 'charge order 7',
      heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
    });
    await first.waitFor((event) => event.type === 'charge-recorded');
    await first.kill();
    const second = await fixture.startWorker();
    await second.waitFor((event) => event.type === 'charge-recorded');
    await release(fixture.workspace, 'order-7');

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
    expect(await ledgerLines(fixture.workspace)).toEqual([`order-7 ${runId}:call_1_1`]);
    expect(second.events.filter((event) => event.type === 'effect-done')).toEqual([]);
    expect(model.requests[1]?.body.input).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1_1',
        output: JSON.stringify({ receipt: 'receipt-order-7' }),
      },
    ]);
  });

  it('is not repeated when the worker dies during it; the model is told the outcome is in doubt', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'charge', arguments: { label: 'order-8', pause: 'inside' } }),
      reply.text('I will check the charge first.'),
    ]);
    const first = await fixture.startWorker();
    const runId = await fixture.keel.startRun({
      task: 'charge order 8',
      heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
    });
    await first.waitFor((event) => event.type === 'effect-done');
    await first.kill();
    await fixture.startWorker();

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
    expect(await ledgerLines(fixture.workspace)).toHaveLength(1);
    expectToldOutcomeInDoubt(model);
  });
});
