import { describe, expect, it } from 'vitest';
import { release } from '../support/process/control.js';
import { useProcessFixtures, victimAndSurvivors } from '../support/process/fixture.js';
import { reply } from '../support/scripted-model.js';

const { setUp } = useProcessFixtures();

describe('a worker stopped with SIGTERM', () => {
  it('lets a running tool finish within the grace period, then exits; another worker continues the run', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'step', arguments: { label: 'finish' } }),
      reply.text('done'),
    ]);
    const workers = await Promise.all([
      fixture.startWorker({ shutdownGraceSeconds: 30 }),
      fixture.startWorker({ shutdownGraceSeconds: 30 }),
    ]);
    const runId = await fixture.keel.startRun({ task: 'finish in time', heartbeatTimeoutSeconds: 2 });
    const started = await Promise.race(
      workers.map((worker) => worker.waitFor((event) => event.type === 'tool-started')),
    );
    const [stopping, [other]] = victimAndSurvivors(workers, started.pid);
    stopping.terminate();
    await stopping.waitFor((event) => event.type === 'sigterm-received');
    await release(fixture.workspace, 'finish');

    expect(await stopping.exited).toEqual({ code: 0, signal: null });
    expect(await fixture.keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
    expect(stopping.events.filter((event) => event.type === 'tool-finished')).toHaveLength(1);
    expect(stopping.events.some((event) => event.type === 'tool-aborted')).toBe(false);
    expect(other!.events.filter((event) => event.type === 'tool-started')).toEqual([]);
    expect(model.requests[1]?.body.input).toEqual([
      { type: 'function_call_output', call_id: 'call_1_1', output: 'done:finish' },
    ]);
  });

  it('cancels a tool that outlasts the grace period; the call is retried on another worker', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'step', arguments: { label: 'slow' } }),
      reply.text('done'),
    ]);
    const workers = await Promise.all([
      fixture.startWorker({ shutdownGraceSeconds: 1 }),
      fixture.startWorker({ shutdownGraceSeconds: 1 }),
    ]);
    const runId = await fixture.keel.startRun({ task: 'too slow', heartbeatTimeoutSeconds: 2 });
    const started = await Promise.race(
      workers.map((worker) => worker.waitFor((event) => event.type === 'tool-started')),
    );
    const [stopping, [other]] = victimAndSurvivors(workers, started.pid);
    stopping.terminate();

    await stopping.waitFor((event) => event.type === 'tool-aborted');
    const retried = await other!.waitFor((event) => event.type === 'tool-started');
    await release(fixture.workspace, 'slow');

    expect(await fixture.keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
    expect(await stopping.exited).toEqual({ code: 0, signal: null });
    expect(retried.idempotencyKey).toBe(started.idempotencyKey);
    expect(model.requests[1]?.body.input).toEqual([
      { type: 'function_call_output', call_id: 'call_1_1', output: 'done:slow' },
    ]);
  });
});
