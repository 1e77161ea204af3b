import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_NAMES, StreamRead } from '../../src/contract/stream-event.js';
import type { StreamItem } from '../../src/contract/stream-event.js';
import { STREAM_CARRIED_BYTES, STREAM_LOG_BYTES } from '../../src/workflows/stream-log.js';
import { connectTestServer, TEST_API_KEY, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import type { HistoryEvent } from '../support/history.js';
import { executionChain } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';
import { offsetProblems, shownText } from './shown-text.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const TURNS = 12;
const PER_EXECUTION = 3;
/** A turn's text: about 16 KB in about 2,500 deltas, so twelve turns overflow the stream log's bound. */
const textOf = (turn: number): string =>
  `Turn ${turn}: ` + Array.from({ length: 2_500 }, (_, i) => `w${i}`).join(' ');

/** Bytes of the history events that streaming adds: the publish signals and the wait updates. */
function streamingBytes(events: readonly HistoryEvent[]): number {
  return events
    .filter(
      (event) =>
        event.workflowExecutionSignaledEventAttributes?.signalName === STREAM_NAMES.publish ||
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ===
          STREAM_NAMES.wait ||
        Boolean(event.workflowExecutionUpdateCompletedEventAttributes),
    )
    .reduce(
      (sum, event) => sum + proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length,
      0,
    );
}

describe('the stream of a long run', () => {
  it('follows continue-as-new without a repeat or a gap, and keeps every execution history bounded', async () => {
    const steps: ScriptStep[] = [];
    for (let turn = 1; turn < TURNS; turn++) {
      steps.push(
        reply.items([{ text: textOf(turn) }, { call: { name: 'echo', arguments: { text: `t${turn}` } } }]),
      );
    }
    steps.push(reply.text(textOf(TURNS)));
    const model = await ScriptedModel.start(steps);
    await withTestWorker(server, { model, tools: [echoTool], modelMode: 'foreground' }, async ({ keel }) => {
      const runId = await keel.startRun({
        task: 'talk a lot',
        maxTurns: TURNS,
        continueAsNewAfterTurns: PER_EXECUTION,
      });
      const items: StreamItem[] = [];
      for await (const item of keel.stream(runId)) items.push(item);
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', turns: TURNS });

      expect(offsetProblems(items)).toEqual([]);
      expect(items.some(({ event }) => event.type === 'gap' || event.type === 'reset')).toBe(false);
      expect(shownText(items)).toEqual(Array.from({ length: TURNS }, (_, i) => textOf(i + 1)));

      const chain = await executionChain(keel.temporal, runId);
      expect(chain).toHaveLength(TURNS / PER_EXECUTION);
      // Each execution's history is bounded by its own turns' work, not by the run's length: the
      // stream carried across continue-as-new is capped.
      for (const execution of chain) {
        expect(execution.bytes).toBeLessThan(PER_EXECUTION * textOf(1).length * 8 + STREAM_CARRIED_BYTES);
      }
      for (const execution of chain) {
        console.info(
          `[measure] streaming history bytes per turn: ${Math.round(streamingBytes(execution.events) / PER_EXECUTION)} (text ${textOf(1).length})`,
        );
        // Streaming is out of history: no publish signal, no subscriber's wait.
        expect(streamingBytes(execution.events)).toBe(0);
        expect(execution.events.filter((event) => event.workflowExecutionSignaledEventAttributes)).toEqual(
          [],
        );
      }
      const history = JSON.stringify(chain.map((execution) => execution.events));
      expect(history).not.toContain(TEST_API_KEY);

      // The log in memory is truncated to its byte bound.
      const read = StreamRead.parse(
        await keel.temporal.workflow.getHandle(runId).query(STREAM_NAMES.read, { from: 0 }),
      );
      expect(read.head).toBe(items.at(-1)!.offset + 1);
      expect(read.base).toBeGreaterThan(0);
      expect(JSON.stringify(read.items).length).toBeLessThan(STREAM_LOG_BYTES);
    });
    model.assertDone();
  });
});
