import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDING_FAILURE_TYPES } from '../../src/contract/run-ending.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { ENDINGS_FAIL_PATCH } from '../../src/workflows/end-run.js';
import { keelStatus } from '../../src/workflows/search-attributes.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { schemaErrors } from '../support/published-schemas.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { blockingTool, echoTool } from '../support/test-tools.js';

const { EventType } = proto.temporal.api.enums.v1;

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

/** How the run's execution closed, as Temporal recorded it: the last event and the search attribute before it. */
async function closing(client: Client, runId: string) {
  const description = await client.workflow.getHandle(runId).describe();
  const events = await historyEvents(client, runId);
  const failure = events.at(-1)?.workflowExecutionFailedEventAttributes?.failure;
  const payload = failure?.applicationFailureInfo?.details?.payloads?.[0];
  // Keel's own upserts: `patched` upserts TemporalChangeVersion too.
  const upserts = events.filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES &&
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.KeelStatus,
  );
  const lastUpsert = upserts.at(-1)?.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes;
  const status = lastUpsert?.indexedFields?.KeelStatus?.data;
  const markers = events.filter((event) => event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED);
  return {
    status: description.status.name,
    keelStatus: description.typedSearchAttributes.get(keelStatus),
    lastUpsertStatus: status ? (JSON.parse(Buffer.from(status).toString('utf8')) as unknown) : undefined,
    // The upsert is recorded before the close: the UI's row says how it ended when it says Failed.
    upsertBeforeClose: events.indexOf(upserts.at(-1)!) < events.length - 1,
    patched: markers.some((marker) =>
      JSON.stringify(marker.markerRecordedEventAttributes?.details ?? {}).includes(
        Buffer.from(JSON.stringify(ENDINGS_FAIL_PATCH)).toString('base64'),
      ),
    ),
    failure: failure
      ? {
          message: failure.message,
          type: failure.applicationFailureInfo?.type,
          nonRetryable: failure.applicationFailureInfo?.nonRetryable,
          details0: payload?.data
            ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as unknown)
            : undefined,
        }
      : undefined,
  };
}

describe('a run that did not complete', () => {
  it('fails its execution with the failure type, the reason, and the partial result in details[0]', async () => {
    await withScenario(server, [reply.error(401, 'Incorrect API key provided')], {}, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'anything' });
      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({ status: 'failed', errorType: 'ModelError.Authentication', turns: 1 });
      if (result.status !== 'failed') throw new Error('unreachable');
      expect(schemaErrors('run-result.schema.json', result)).toEqual([]);

      const closed = await closing(server.client, runId);
      expect(closed).toMatchObject({
        status: 'FAILED',
        keelStatus: 'failed',
        lastUpsertStatus: 'failed',
        upsertBeforeClose: true,
        patched: true,
        failure: {
          type: 'ModelError.Authentication',
          message: result.reason,
          nonRetryable: true,
          details0: result,
        },
      });

      // What a plain Temporal client sees: the failure, typed, with the result as its first detail.
      const error = await server.client.workflow
        .getHandle(runId)
        .result()
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('ModelError.Authentication');
      expect((cause as ApplicationFailure).details).toEqual([result]);
    });
  });

  it('fails at its turn limit with KeelError.MaxTurnsExceeded, and keel result still prints the result', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'echo', arguments: { text: '1' } }),
        reply.calls({ name: 'echo', arguments: { text: '2' } }),
      ],
      { tools: [echoTool] },
      async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'loop forever', maxTurns: 2 });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'max_turns', turns: 2, toolCalls: 1 });
        expect(await closing(server.client, runId)).toMatchObject({
          status: 'FAILED',
          keelStatus: 'max_turns',
          failure: {
            type: ENDING_FAILURE_TYPES.max_turns,
            message:
              'The run stopped at its turn limit (maxTurns) after 2 model turns, before the model finished; the calls of its last turn were not run.',
            nonRetryable: true,
            details0: result,
          },
        });

        const printed = await runCli(['result', runId, '--json', '--task-queue', taskQueue], {
          env: environment,
        });
        expect(printed.code, printed.stderr).toBe(3);
        expect(JSON.parse(printed.stdout) as RunResult).toEqual(result);
      },
    );
  });

  it('fails with KeelError.IncompleteOutput when the model’s answer was cut off', async () => {
    await withScenario(
      server,
      [
        reply.items([{ text: 'The answer is' }], {
          status: 'incomplete',
          incompleteReason: 'max_output_tokens',
        }),
      ],
      {},
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'long answer' });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'incomplete', reason: 'max_output_tokens' });
        expect(await closing(server.client, runId)).toMatchObject({
          status: 'FAILED',
          keelStatus: 'incomplete',
          failure: { type: 'KeelError.IncompleteOutput', details0: result },
        });
      },
    );
  });

  it('completes only when the model finished', async () => {
    await withScenario(server, [reply.text('done')], {}, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'easy' });
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
      expect(await closing(server.client, runId)).toMatchObject({
        status: 'COMPLETED',
        keelStatus: 'completed',
        patched: false,
        failure: undefined,
      });
    });
  });

  it('ends as Canceled when cancelled, with no result to read', async () => {
    const blocking = blockingTool();
    await withScenario(
      server,
      [reply.calls({ name: 'block', arguments: { label: 'x' } })],
      { tools: [blocking.tool] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'block' });
        await blocking.started.promise;
        await keel.cancelRun(runId);
        const error = await keel.waitForResult(runId).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
        expect(await closing(server.client, runId)).toMatchObject({
          status: 'CANCELLED',
          keelStatus: 'cancelled',
        });
      },
    );
  });
});
