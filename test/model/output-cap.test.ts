import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../src/contract/defaults.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const sentCap = (model: ScriptedModel): unknown[] =>
  model.requests.map((request) => (request.body as { max_output_tokens?: unknown }).max_output_tokens);

describe("a worker's cap on a turn's output", () => {
  it('is sent on every turn of a run that sets none, and a run that sets its own keeps it', async () => {
    const model = await ScriptedModel.start([reply.text('one'), reply.text('two')]);
    try {
      await withTestWorker(server, { model }, async ({ keel }) => {
        await keel.waitForResult(await keel.startRun({ task: 'first' }));
        await keel.waitForResult(await keel.startRun({ task: 'second', maxOutputTokens: 500 }));
      });
      expect(sentCap(model)).toEqual([DEFAULT_MAX_OUTPUT_TOKENS, 500]);
    } finally {
      await model.close();
    }
  });

  it('is left to the model server with maxOutputTokens null (KEEL_MAX_OUTPUT_TOKENS=none)', async () => {
    const model = await ScriptedModel.start([reply.text('one')]);
    try {
      await withTestWorker(server, { model, maxOutputTokens: null }, async ({ keel }) => {
        await keel.waitForResult(await keel.startRun({ task: 'first' }));
      });
      expect(sentCap(model)).toEqual([undefined]);
    } finally {
      await model.close();
    }
  });

  for (const modelMode of ['background', 'foreground'] as const)
    it(`stops a runaway answer from a server that ignores it (${modelMode}): the run ends incomplete, with what was written`, async () => {
      // The scripted server, like llama.cpp's runaway, writes on whatever max_output_tokens says.
      const runaway = 'I repeat myself. '.repeat(400);
      const model = await ScriptedModel.start([reply.streamed(reply.text(runaway), { deltaMs: 1 })]);
      try {
        await withTestWorker(server, { model, modelMode, maxOutputTokens: 32 }, async ({ keel }) => {
          const result = await keel.waitForResult(await keel.startRun({ task: 'talk' }));
          expect(result).toMatchObject({ status: 'incomplete', reason: 'max_output_tokens', turns: 1 });
          // 32 tokens allow 256 characters streamed; the turn stops there, not at the answer's 6,800.
          const partial = (result as { partialText: string }).partialText;
          expect(partial.length).toBeGreaterThan(200);
          expect(partial.length).toBeLessThanOrEqual(256);
          expect(runaway.startsWith(partial)).toBe(true);
        });
        expect(sentCap(model)).toEqual([32]);
      } finally {
        await model.close();
      }
    });

  for (const modelMode of ['background', 'foreground'] as const)
    it(`counts a turn that reached it as incomplete, though the server says completed (${modelMode}), as llama.cpp's server does`, async () => {
      // A scripted reply uses 10 + one output token per item: six items reach a cap of 16, not one of 17.
      const six = (word: string) => reply.items(Array.from({ length: 6 }, () => ({ text: word })));
      const model = await ScriptedModel.start([six('cut'), six('whole')]);
      try {
        await withTestWorker(server, { model, modelMode }, async ({ keel }) => {
          const cut = await keel.waitForResult(await keel.startRun({ task: 'talk', maxOutputTokens: 16 }));
          expect(cut).toMatchObject({ status: 'incomplete', reason: 'max_output_tokens' });
          expect((cut as { partialText: string }).partialText).toMatch(/^cut\ncut/u);
          const whole = await keel.waitForResult(await keel.startRun({ task: 'talk', maxOutputTokens: 17 }));
          expect(whole).toMatchObject({ status: 'completed' });
        });
      } finally {
        await model.close();
      }
    });
});
