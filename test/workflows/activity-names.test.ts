import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../../src/contract/activity-names.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';
import { silentLogger } from '../support/loggers.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const fixtures = path.resolve(import.meta.dirname, '../fixtures/histories');

interface RecordedEvent {
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  markerRecordedEventAttributes?: { details?: Record<string, { payloads?: Array<{ data?: string }> }> };
}

/** The activity names a recorded history scheduled, and the patches it recorded. */
async function recorded(file: string): Promise<{ scheduled: string[]; patches: string[] }> {
  const history = JSON.parse(await readFile(file, 'utf8')) as { events: RecordedEvent[] };
  return {
    scheduled: history.events.flatMap(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    ),
    patches: history.events.flatMap((event) =>
      (event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []).map((payload) =>
        Buffer.from(payload.data ?? '', 'base64').toString('utf8'),
      ),
    ),
  };
}

describe("Keel's activity names", () => {
  it('are keel.-prefixed in a new run', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'a' } }),
      reply.text('done'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'echo a' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
        const scheduled = (await historyEvents(server.client, runId)).flatMap(
          (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
        );
        expect(scheduled).toEqual([
          ACTIVITY_NAMES.describeWorker,
          ACTIVITY_NAMES.callModel,
          ACTIVITY_NAMES.executeTool,
          ACTIVITY_NAMES.callModel,
        ]);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('stay unprefixed in every recorded history without the keel-activity-names patch, and the newest generation has it', async () => {
    const generations = (await readdir(fixtures)).sort();
    const legacy = new Set<string>(Object.values(LEGACY_ACTIVITY_NAMES));
    const prefixed = new Set<string>(Object.values(ACTIVITY_NAMES));
    for (const generation of generations) {
      for (const file of (await readdir(path.join(fixtures, generation))).filter((name) =>
        name.endsWith('.json'),
      )) {
        const { scheduled, patches } = await recorded(path.join(fixtures, generation, file));
        const names = patches.some((patch) => patch.includes('keel-activity-names')) ? prefixed : legacy;
        expect(
          scheduled.filter((name) => !names.has(name)),
          `${generation}/${file}`,
        ).toEqual([]);
        if (generation === generations.at(-1)) expect(names, `${generation}/${file}`).toBe(prefixed);
      }
    }
  });

  it('are answered under the unprefixed names too, so a run scheduled before the prefix goes on', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(import.meta.dirname, '../fixtures/legacy-names-workflow/index.ts'),
      logger: silentLogger,
    });
    const model = await ScriptedModel.start([]);
    try {
      const result = await withTestWorker(
        server,
        {
          model,
          tools: [echoTool],
          defaultModel: 'old-default',
          workerOptions: { workflowBundle: { code } },
        },
        ({ taskQueue }) =>
          server.client.workflow.execute<() => Promise<unknown>>('legacyActivityNames', {
            taskQueue,
            workflowId: `legacy-${randomUUID()}`,
          }),
      );
      expect(result).toEqual({
        legacyModel: 'old-default',
        prefixedModel: 'old-default',
        observation: { callId: 'call_1', ok: true, output: 'echo: old run' },
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});
