import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { evalPlan } from '../../src/cli/eval-options.js';
import type { EvalOptions } from '../../src/cli/eval-options.js';
import { UsageError } from '../../src/cli/io.js';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

const NO_OPTIONS: EvalOptions = {
  file: undefined,
  runs: [],
  histories: [],
  query: undefined,
  limit: undefined,
  instructions: undefined,
  instructionsFile: undefined,
  model: undefined,
  agent: undefined,
  tools: undefined,
  conversation: undefined,
  unmatched: undefined,
  allowTools: undefined,
  match: undefined,
  judge: undefined,
  concurrency: undefined,
  evalId: undefined,
  html: undefined,
  taskQueue: 'keel',
};

async function evalFile(content: unknown): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-eval-plan-'));
  directories.push(directory);
  const file = path.join(directory, 'evals.json');
  await writeFile(file, JSON.stringify(content));
  return file;
}

describe('evalPlan --limit', () => {
  it("without --query, replaces the limit of each of the eval file's query cases and leaves other cases be", async () => {
    const file = await evalFile({
      cases: [
        { id: 'recent', query: 'KeelStatus = "completed"', limit: 50 },
        { id: 'older', query: 'KeelStatus = "max_turns"' },
        { id: 'one', run: 'keel-1' },
      ],
    });
    const plan = await evalPlan({ ...NO_OPTIONS, file, limit: 3 });
    expect(plan.sources.map((source) => [source.kind, source.kind === 'query' ? source.limit : '-'])).toEqual(
      [
        ['query', 3],
        ['query', 3],
        ['run', '-'],
      ],
    );
  });

  it('with --query, is that query’s alone', async () => {
    const file = await evalFile({ cases: [{ id: 'recent', query: 'KeelStatus = "completed"', limit: 50 }] });
    const plan = await evalPlan({ ...NO_OPTIONS, file, query: 'KeelStatus = "failed"', limit: 7 });
    expect(plan.sources.map((source) => (source.kind === 'query' ? source.limit : undefined))).toEqual([
      50, 7,
    ]);
  });

  it('is refused when no case is a query', async () => {
    const file = await evalFile({ cases: [{ id: 'one', run: 'keel-1' }] });
    await expect(evalPlan({ ...NO_OPTIONS, file, limit: 3 })).rejects.toThrow(UsageError);
    await expect(evalPlan({ ...NO_OPTIONS, runs: ['keel-1'], limit: 3 })).rejects.toThrow(
      /--limit goes with --query, or with an eval file that has query cases/u,
    );
  });
});

describe('evalPlan --conversation', () => {
  it("takes the eval file's, and the option over it; refuses a mode that is neither", async () => {
    const file = await evalFile({
      cases: [{ id: 'one', task: 'say hi' }],
      candidate: { conversation: 'stateless' },
    });
    expect((await evalPlan({ ...NO_OPTIONS, file })).candidate).toEqual({ conversation: 'stateless' });
    expect((await evalPlan({ ...NO_OPTIONS, file, conversation: 'chained' })).candidate).toEqual({
      conversation: 'chained',
    });
    await expect(evalPlan({ ...NO_OPTIONS, file, conversation: 'stored' })).rejects.toThrow(
      new UsageError('--conversation must be chained or stateless, not "stored"'),
    );
  });
});
