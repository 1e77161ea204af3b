import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { RecordingLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('a model attempt that times out', () => {
  it.each([
    ['foreground', /^Model turn 1, attempt 1 failed: ModelError\.Timeout: /u],
    [
      'background',
      /^Model turn 1, attempt 1: stopped, (it timed out|the server no longer knows the attempt)/u,
    ],
  ] as const)(
    'is said in the worker log as it happens (%s), and the retry answers',
    async (modelMode, said) => {
      const model = await ScriptedModel.start([reply.hang(), reply.text('second time lucky')]);
      const logger = new RecordingLogger();
      try {
        await withTestWorker(server, { model, logger, modelMode }, async ({ keel }) => {
          const runId = await keel.startRun({ task: 'answer', modelTimeoutSeconds: 2 });
          const result = await keel.waitForResult(runId);
          expect(result).toMatchObject({ status: 'completed', finalText: 'second time lucky' });
        });
        const warnings = logger.entries
          .filter((entry) => entry.level === 'warn')
          .map((entry) => entry.message);
        expect(warnings).toContainEqual(expect.stringMatching(said));
      } finally {
        await model.close();
      }
    },
  );
});
