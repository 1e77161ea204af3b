/**
 * Records the replay fixtures from real runs on a dev server, into a new generation
 * test/fixtures/histories/<today>/. Older generations stay: they are the runs that were in flight
 * under older code, and every generation must keep replaying. Run with `npm run record-histories`
 * (a vitest file, so it shares the test set-up) and commit the result.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../test/support/harness.js';
import type { TestServer } from '../test/support/harness.js';
import { historyJson } from '../test/support/history.js';
import { recordedScenarios } from '../test/support/recorded-scenarios.js';
import { ScriptedModel } from '../test/support/scripted-model.js';

const directory = path.resolve(
  import.meta.dirname,
  '../test/fixtures/histories',
  new Date().toISOString().slice(0, 10),
);

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
      const { tools, started, release } = scenario.tools();
      const model = await ScriptedModel.start(scenario.steps);
      try {
        const runId = `fixture-${scenario.name}`;
        const options = { model, tools, workspace, workerOptions: { shutdownGraceTime: 0 } };
        const taskQueue = await withTestWorker(server, options, async ({ keel, worker, taskQueue }) => {
          await keel.startRun(scenario.input, { runId });
          if (scenario.cancel) {
            await started;
            await keel.cancelRun(runId);
          }
          if (scenario.restartWorker) {
            await started;
            worker.shutdown();
          } else {
            await keel.waitForResult(runId).catch(() => undefined);
          }
          return taskQueue;
        });
        if (scenario.restartWorker) {
          release?.();
          await withTestWorker(server, { ...options, taskQueue }, ({ keel }) => keel.waitForResult(runId));
        }
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
