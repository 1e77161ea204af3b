/**
 * Regenerates the replay fixtures in test/fixtures/histories from real runs on a dev server.
 * Run with `npm run record-histories` (a vitest file, so it shares the test set-up); commit the result.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../test/support/harness.js';
import type { TestServer } from '../test/support/harness.js';
import { historyJson } from '../test/support/history.js';
import { recordedScenarios } from '../test/support/recorded-scenarios.js';
import { ScriptedModel } from '../test/support/scripted-model.js';

const directory = path.resolve(import.meta.dirname, '../test/fixtures/histories');

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
  await mkdir(directory, { recursive: true });
});
afterAll(async () => {
  await server?.close();
});

describe('record-histories', () => {
  for (const scenario of recordedScenarios) {
    it(`records ${scenario.name}`, async () => {
      const workspace = await temporaryWorkspace();
      for (const [file, content] of Object.entries(scenario.files ?? {})) {
        await writeFile(path.join(workspace, file), content);
      }
      const { tools, started } = scenario.tools();
      const model = await ScriptedModel.start(scenario.steps);
      try {
        const runId = `fixture-${scenario.name}`;
        await withTestWorker(server, { model, tools, workspace }, async ({ keel }) => {
          await keel.startRun(scenario.input, { runId });
          if (scenario.cancel) {
            await started;
            await keel.cancelRun(runId);
          }
          await keel.waitForResult(runId).catch(() => undefined);
        });
        model.assertDone();
        const json = JSON.stringify(JSON.parse(await historyJson(server.client, runId)), null, 2);
        expect(json).toContain('"agentRun"');
        await writeFile(path.join(directory, `${scenario.name}.json`), json + '\n');
      } finally {
        await model.close();
      }
    });
  }
});
