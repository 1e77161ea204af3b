import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { recordedScenarios } from '../support/recorded-scenarios.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/histories');

async function loadHistories(): Promise<Array<{ workflowId: string; history: unknown }>> {
  const files = (await readdir(fixtures)).filter((file) => file.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      workflowId: path.basename(file, '.json'),
      history: JSON.parse(await readFile(path.join(fixtures, file), 'utf8')) as unknown,
    })),
  );
}

describe('workflow replay', () => {
  it('has a recorded history for every scenario (run `npm run record-histories` after adding one)', async () => {
    const recorded = (await loadHistories()).map((entry) => entry.workflowId);
    expect(recorded).toEqual(recordedScenarios.map((scenario) => scenario.name).sort());
  });

  it('replays every recorded history against the current workflow code', async () => {
    const histories = await loadHistories();
    const results = [];
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, replayName: 'keel-replay' },
      histories,
    )) {
      results.push({ workflowId: result.workflowId, error: result.error?.message });
    }
    expect(results).toEqual(histories.map(({ workflowId }) => ({ workflowId, error: undefined })));
  });

  it('rejects a workflow change that would break running histories', async () => {
    const [first] = await loadHistories();
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(import.meta.dirname, '../fixtures/incompatible-workflow/index.ts'),
      logger: {
        log: () => undefined,
        trace: () => undefined,
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
      },
    });
    const replay = Worker.runReplayHistory({ workflowBundle: { code } }, first!.history, first!.workflowId);
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
