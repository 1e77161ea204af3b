import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PAYLOAD_BYTES_LIMIT } from '../../src/contract/defaults.js';
import { utf8Bytes } from '../../src/contract/payload.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { connectTestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import type { TestServer } from '../support/harness.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { reply } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Returns `count` copies of `unit`: multi-byte or escaped characters make bytes outgrow characters. */
const repeatTool = defineTool({
  name: 'repeat',
  description: 'Repeat a character.',
  schema: z.object({ unit: z.string(), count: z.number().int() }),
  readOnly: true,
  execute: ({ unit, count }) => unit.repeat(count),
});

function outputs(model: ScriptedModel, index: number): Array<Record<string, unknown>> {
  return (model.requests[index]?.body.input ?? []).map(
    (item) => JSON.parse(item.output as string) as Record<string, unknown>,
  );
}

describe('payload guards', () => {
  it('shares the payload between large results of one turn, so the next model turn can still be sent', async () => {
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'repeat', arguments: { unit: '€', count: 400_000 } },
          { name: 'repeat', arguments: { unit: '€', count: 400_000 } },
          { name: 'repeat', arguments: { unit: 'ok', count: 1 } },
        ),
        reply.text('Read what I could.'),
      ],
      { tools: [repeatTool] },
      async ({ keel, model }) => {
        // 1.2 MB each (3 bytes a character), within the character limit: together over Temporal's 2 MiB.
        const runId = await keel.startRun({
          task: 'read big things',
          parallelToolCalls: true,
          observationCharLimit: 500_000,
        });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 3 });
        const input = model.requests[1]!.body.input;
        expect(input.map((item) => item.call_id)).toEqual(['call_1_1', 'call_1_2', 'call_1_3']);
        expect(input[2]!.output).toBe('ok');
        for (const item of input.slice(0, 2)) {
          const result = JSON.parse(item.output as string) as Record<string, unknown>;
          expect(result).toMatchObject({ error: 'output_too_large' });
          expect(result.message).toMatch(/^The result was \d+ bytes: too large to send together/);
          expect(utf8Bytes(result.preview as string)).toBeGreaterThan(400_000);
        }
        expect(utf8Bytes(JSON.stringify(input))).toBeLessThan(PAYLOAD_BYTES_LIMIT);
      },
    );
  });

  it('cuts one result whose JSON outgrows the payload limit inside the activity, instead of failing its completion forever', async () => {
    await withScenario(
      server,
      [reply.calls({ name: 'repeat', arguments: { unit: '\u0001', count: 450_000 } }), reply.text('ok')],
      { tools: [repeatTool] },
      async ({ keel, model }) => {
        // 450,000 characters pass the character limit, but each is 6 bytes as JSON (\u0001): 2.7 MB.
        const runId = await keel.startRun({ task: 'read', observationCharLimit: 500_000 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 1 });
        const [result] = outputs(model, 1);
        expect(result).toMatchObject({ error: 'output_too_large' });
        const history = await server.client.workflow.getHandle(runId).fetchHistory();
        const failures = history.events!.filter(
          (event) => event.activityTaskFailedEventAttributes || event.workflowTaskFailedEventAttributes,
        );
        expect(failures).toEqual([]);
      },
    );
  });

  it('fails the run at once, not retrying, when the model’s output is larger than a payload may be', async () => {
    await withScenario(
      server,
      [reply.text('x'.repeat(2_200_000))],
      // No output cap, so no stream budget cuts the answer first: the payload guard is what is tested.
      { tools: [], maxOutputTokens: null },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'write a novel' });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'failed', errorType: 'KeelError.PayloadTooLarge', turns: 1 });
        expect(result.status === 'failed' && result.reason).toMatch(
          /^The model's output for turn 1 is \d+ bytes, more than the \d+ bytes Keel lets through one Temporal payload/,
        );
        expect(model.requests).toHaveLength(1);
      },
    );
  });
});
