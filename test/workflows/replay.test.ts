import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { recordedScenarios } from '../support/recorded-scenarios.js';
import { silentLogger } from '../support/loggers.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/histories');

/** Generations of recorded histories, oldest first (directories named by recording date). */
async function generations(): Promise<string[]> {
  return (await readdir(fixtures, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Every recorded history of one generation, or of all of them. */
async function loadHistories(generation?: string): Promise<Array<{ workflowId: string; history: unknown }>> {
  const loaded: Array<{ workflowId: string; history: unknown }> = [];
  for (const name of generation === undefined ? await generations() : [generation]) {
    const files = (await readdir(path.join(fixtures, name))).filter((file) => file.endsWith('.json')).sort();
    for (const file of files) {
      loaded.push({
        workflowId: `${name}/${path.basename(file, '.json')}`,
        history: JSON.parse(await readFile(path.join(fixtures, name, file), 'utf8')) as unknown,
      });
    }
  }
  return loaded;
}

describe('workflow replay', () => {
  it('has a recorded history for every scenario in the newest generation (`npm run record-histories`)', async () => {
    const newest = (await generations()).at(-1)!;
    const recorded = (await loadHistories(newest)).map((entry) => entry.workflowId).sort();
    expect(recorded).toEqual(recordedScenarios.map((scenario) => `${newest}/${scenario.name}`).sort());
  });

  it('replays every recorded history of every generation against the current workflow code', async () => {
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
      logger: silentLogger,
    });
    const replay = Worker.runReplayHistory({ workflowBundle: { code } }, first!.history, first!.workflowId);
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
