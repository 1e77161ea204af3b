import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowsPath } from '../../src/prebuilt-bundle.js';
import { KeelTelemetryPlugin } from '../../src/telemetry/telemetry-plugin.js';
import { workflowInterceptorModules } from '../../src/telemetry/workflow-interceptor-modules.js';
import { silentLogger } from '../support/loggers.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/histories');

/** Every recorded history of every generation. */
async function allHistories(): Promise<Array<{ workflowId: string; history: unknown }>> {
  const loaded: Array<{ workflowId: string; history: unknown }> = [];
  const generations = (await readdir(fixtures, { withFileTypes: true })).filter((entry) =>
    entry.isDirectory(),
  );
  for (const { name } of generations) {
    for (const file of (await readdir(path.join(fixtures, name))).filter((each) => each.endsWith('.json'))) {
      loaded.push({
        workflowId: `${name}/${path.basename(file, '.json')}`,
        history: JSON.parse(await readFile(path.join(fixtures, name, file), 'utf8')) as unknown,
      });
    }
  }
  return loaded;
}

describe('replay with the tracing interceptors in the bundle', () => {
  it('replays every recorded history, made before they were there, without a determinism error', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules: [...workflowInterceptorModules],
      logger: silentLogger,
    });
    // The interceptors are in the bundle this test replays with.
    expect(code).toContain('RunSpanInterceptor');
    expect(code).toContain('OpenTelemetryInboundInterceptor');
    const histories = await allHistories();
    expect(histories.length).toBeGreaterThan(0);
    const results = [];
    for await (const result of Worker.runReplayHistories(
      {
        workflowBundle: { code },
        replayName: 'keel-telemetry-replay',
        plugins: [new KeelTelemetryPlugin({ captureContent: false })],
      },
      histories,
    )) {
      results.push({ workflowId: result.workflowId, error: result.error?.message });
    }
    expect(results).toEqual(histories.map(({ workflowId }) => ({ workflowId, error: undefined })));
  }, 120_000);
});
