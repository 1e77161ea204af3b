/**
 * Records the replay fixtures from real runs on a dev server, into a new generation
 * test/fixtures/histories/<today>/. Older generations stay: they are the runs that were in flight
 * under older code, and every generation must keep replaying. Run with `npm run record-histories`
 * (a vitest file, so it shares the test set-up) and commit the result.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../test/support/harness.js';
import type { TestServer } from '../test/support/harness.js';
import { historyJson } from '../test/support/history.js';
import { executionChain } from '../test/support/run-state.js';
import { recordedScenarios } from '../test/support/recorded-scenarios.js';
import { ScriptedModel } from '../test/support/scripted-model.js';

const histories = path.resolve(import.meta.dirname, '../test/fixtures/histories');
const today = new Date().toISOString().slice(0, 10);
/**
 * `<today>`, or `<today>.2`, `.3`… when that generation exists: a generation that was committed may
 * be what runs in flight were recorded under, so a new recording never overwrites it.
 */
const directory = path.join(histories, nextGeneration(today));

function nextGeneration(date: string): string {
  const taken = new Set(existsSync(histories) ? readdirSync(histories) : []);
  if (!taken.has(date)) return date;
  let suffix = 2;
  while (taken.has(`${date}.${suffix}`)) suffix++;
  return `${date}.${suffix}`;
}

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
      const { tools, started, release } = scenario.tools(workspace);
      const model = await ScriptedModel.start(scenario.steps);
      try {
        const runId = `fixture-${scenario.name}`;
        const options = {
          model,
          tools,
          workspace,
          workerOptions: { shutdownGraceTime: 0 },
          ...scenario.worker,
        };
        const taskQueue = await withTestWorker(server, options, async ({ keel, worker, taskQueue }) => {
          await keel.startRun(scenario.input, { runId });
          await scenario.interact?.(keel, runId, {
            ...(started ? { started } : {}),
            ...(release ? { release } : {}),
          });
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
        const history = scenario.firstExecution
          ? historyToJSON({ events: (await executionChain(server.client, runId))[0]!.events })
          : await historyJson(server.client, runId);
        const json = JSON.stringify(JSON.parse(history), null, 2);
        expect(json).toContain('"agentRun"');
        await writeFile(path.join(directory, `${scenario.name}.json`), json + '\n');
      } finally {
        await model.close();
      }
    });
  }
});
