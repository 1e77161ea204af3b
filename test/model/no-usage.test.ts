import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { RecordingLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** `step` as a server that reports no usage answers it (open-responses-server 0.4.1 did). */
function withoutUsage(step: ScriptStep): ScriptStep {
  if (step.kind !== 'response') throw new Error('only responses carry usage');
  return {
    ...step,
    build: (request, ids) => {
      const body = step.build(request, ids);
      delete body.usage;
      return body;
    },
  };
}

describe('a model server that reports no token usage', () => {
  it('is said once in the worker log, naming the budgets it leaves unenforceable; the run completes', async () => {
    const model = await ScriptedModel.start([
      withoutUsage(reply.calls({ name: 'echo', arguments: { text: 'one' } })),
      withoutUsage(reply.text('done')),
    ]);
    const logger = new RecordingLogger();
    try {
      await withTestWorker(server, { model, tools: [echoTool], logger }, async ({ keel }) => {
        const result = await keel.waitForResult(await keel.startRun({ task: 'echo', maxTotalTokens: 1_000 }));
        expect(result).toMatchObject({ status: 'completed', finalText: 'done', usage: { totalTokens: 0 } });
      });
      const warnings = logger.entries.filter((entry) => entry.message.includes('reports no token usage'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(
        'so token and cost budgets (maxTotalTokens, maxCostUsd, KEEL_MAX_TOTAL_TOKENS, KEEL_MAX_COST_USD) cannot stop a run',
      );
    } finally {
      await model.close();
    }
  });

  it('is not said for a server that reports it', async () => {
    const model = await ScriptedModel.start([reply.text('done')]);
    const logger = new RecordingLogger();
    try {
      await withTestWorker(server, { model, logger }, async ({ keel }) => {
        expect(await keel.waitForResult(await keel.startRun({ task: 'hi' }))).toMatchObject({
          status: 'completed',
        });
      });
      expect(logger.entries.filter((entry) => entry.message.includes('reports no token usage'))).toEqual([]);
    } finally {
      await model.close();
    }
  });
});
