import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../src/testing/script.js';
import { deferred } from '../support/deferred.js';
import { historyEvents } from '../support/history.js';
import { useProcessFixtures } from '../support/process/fixture.js';
import { reply } from '../support/scripted-model.js';

const { EventType } = proto.temporal.api.enums.v1;

const { setUp } = useProcessFixtures();

describe('an eval whose worker is killed half-way', () => {
  it('is finished by another worker: the ended case is not run again, the running one goes on', async () => {
    const generation = deferred();
    const { model, fixture } = await setUp((request: RecordedRequest) =>
      request.body.instructions === 'case one'
        ? reply.text('one')
        : reply.held(reply.text('two'), generation.promise),
    );
    const first = await fixture.startWorker();
    const evalId = await fixture.keel.startEval({
      concurrency: 1,
      cases: [
        { caseId: 'one', input: { task: 'first', instructions: 'case one', heartbeatTimeoutSeconds: 2 } },
        { caseId: 'two', input: { task: 'second', instructions: 'case two', heartbeatTimeoutSeconds: 2 } },
      ],
    });
    // Case two's model turn has started, so case one has ended and the eval has recorded it.
    await model.waitUntil(() => model.requests.some((request) => request.body.instructions === 'case two'));
    await first.kill();
    const second = await fixture.startWorker();
    generation.resolve();

    expect(await fixture.keel.waitForEval(evalId)).toEqual({
      cases: [
        { caseId: 'one', runId: `${evalId}.one`, status: 'completed' },
        { caseId: 'two', runId: `${evalId}.two`, status: 'completed' },
      ],
    });
    expect(model.requests.filter((request) => request.body.instructions === 'case one')).toHaveLength(1);
    // Both workers took the eval's workflow tasks: the second replayed the first's history and went on.
    const identities = new Set(
      (await historyEvents(fixture.keel.temporal, evalId))
        .filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        .map((event) => event.workflowTaskCompletedEventAttributes?.identity?.split('@')[0]),
    );
    expect(identities).toEqual(new Set([String(first.pid), String(second.pid)]));
  });
});
