import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { EDIT_FILE_MAX_BYTES } from '../../../src/tools/builtin/edit-file.js';
import {
  SEARCH_FILES_MAX_FILE_BYTES,
  SEARCH_FILES_REGEX_BUDGET_MS,
} from '../../../src/tools/builtin/search-files.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { runBuiltin } from '../../support/run-builtin.js';

/**
 * Hostile inputs through the real tools (executor, workspace, files on disk) while the event loop's
 * delay and the process's memory are measured. The bounds are generous: they prove that no tool
 * blocks the worker's event loop (heartbeats, cancellation and every other call depend on it) or
 * builds an unbounded result, not a speed. Each scenario prints its figures.
 */
// Below the 1 s a scan used to block the loop for when it hit its budget; above the delays a machine
// loaded far beyond its cores adds by scheduling alone (up to ~500 ms seen with 2 cores at load 20).
const MAX_EVENT_LOOP_DELAY_MS = 750;
const MAX_RSS_GROWTH_MB = 200;

interface Figures {
  observation: Observation;
  /** The worse of the event-loop delay histogram's maximum and the longest gap between samples. */
  maxDelayMs: number;
  /** The process's RSS high-water mark above the RSS before the call. */
  peakRssGrowthMb: number;
  /** Highest RSS seen by sampling above the RSS before the call. */
  sampledRssGrowthMb: number;
  elapsedMs: number;
}

let root: string;
let workspace: Workspace;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-hostile-bounds-')));
  workspace = await Workspace.open(root);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * Samples on a 5 ms timer while a call runs: the longest gap between two samples (the loop was blocked
 * meanwhile) and the highest RSS. {@link Sampler.stop} resolves at the second sample after the call, so
 * a block that lasted until the call returned is seen, by it and by the event-loop histogram alike.
 */
class Sampler {
  maxGapMs = 0;
  maxRss = process.memoryUsage.rss();
  #last = performance.now();
  #onSample: (() => void) | undefined;
  readonly #timer = setInterval(() => {
    const now = performance.now();
    this.maxGapMs = Math.max(this.maxGapMs, now - this.#last);
    this.#last = now;
    this.maxRss = Math.max(this.maxRss, process.memoryUsage.rss());
    this.#onSample?.();
  }, 5);

  async stop(): Promise<void> {
    for (let sample = 0; sample < 2; sample++) {
      await new Promise<void>((resolve) => (this.#onSample = resolve));
    }
    clearInterval(this.#timer);
  }
}

/** Runs one tool call while measuring; the setup of its files is done before, outside the measurement. */
async function measure(name: string, tool: string, args: Record<string, unknown>): Promise<Figures> {
  const rssBefore = process.memoryUsage.rss();
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const sampler = new Sampler();
  const started = performance.now();
  const observation = await runBuiltin(workspace, tool, args);
  const elapsedMs = performance.now() - started;
  await sampler.stop();
  histogram.disable();
  const figures = {
    observation,
    maxDelayMs: Math.max(histogram.max / 1e6, sampler.maxGapMs),
    // maxRSS is the high-water mark of the whole process (kilobytes): it catches a peak that lasted
    // only while the loop was blocked, which sampling misses; but a peak of an earlier scenario
    // shows again here (so this errs on the high side).
    peakRssGrowthMb: Math.max(0, process.resourceUsage().maxRSS * 1024 - rssBefore) / 2 ** 20,
    sampledRssGrowthMb: Math.max(0, sampler.maxRss - rssBefore) / 2 ** 20,
    elapsedMs,
  };
  console.log(
    `${name}: max event-loop delay ${(histogram.max / 1e6).toFixed(1)} ms ` +
      `(longest gap between samples ${sampler.maxGapMs.toFixed(1)} ms), ` +
      `peak RSS growth ${figures.peakRssGrowthMb.toFixed(1)} MB (sampled ${figures.sampledRssGrowthMb.toFixed(1)} MB), ` +
      `${elapsedMs.toFixed(0)} ms, ${observation.ok ? 'ok' : observation.error}`,
  );
  return figures;
}

function expectBounded(figures: Figures): void {
  expect(figures.maxDelayMs).toBeLessThan(MAX_EVENT_LOOP_DELAY_MS);
  expect(figures.peakRssGrowthMb).toBeLessThan(MAX_RSS_GROWTH_MB);
}

function message(observation: Observation): string {
  return observation.ok ? `unexpected success: ${observation.output.slice(0, 200)}` : observation.message;
}

// Sequential, in this order: the RSS high-water mark only rises, so a scenario that ran out of bounds
// would also fail the ones after it; each stays within bounds on its own.
describe('hostile inputs stay within event-loop and memory bounds', { timeout: 120_000 }, () => {
  it('edit_file: replaceAll with a 1,000,000-character newText on a 4 KB file', async () => {
    await writeFile(path.join(root, 'small.txt'), 'x'.repeat(4096));
    const figures = await measure('edit_file 4096 × 1,000,000 chars', 'edit_file', {
      path: 'small.txt',
      oldText: 'x',
      newText: 'y'.repeat(1_000_000),
      replaceAll: true,
    });
    expect(message(figures.observation)).toBe(
      `the edit would make small.txt ${4096 * 1_000_000} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
    );
    expectBounded(figures);
  });

  it('edit_file: replaceAll of a one-byte text that occurs 2.6 million times', async () => {
    await writeFile(path.join(root, 'dense.txt'), 'a\n'.repeat(EDIT_FILE_MAX_BYTES / 2));
    const figures = await measure('edit_file 2,621,440 occurrences', 'edit_file', {
      path: 'dense.txt',
      oldText: 'a',
      newText: 'b',
      replaceAll: true,
    });
    expect(figures.observation).toMatchObject({ ok: true });
    expect(figures.observation.ok ? figures.observation.output : '').toMatch(
      /^Replaced 2621440 occurrences in dense\.txt at lines 1, 2, 3, .*, 20, … \(1 line became 1 each\); dense\.txt now has 2621440 lines\.$/,
    );
    expectBounded(figures);
  });

  it('search_files: a catastrophically backtracking regex over several files', async () => {
    await mkdir(path.join(root, 'evil'));
    for (let index = 0; index < 8; index++) {
      await writeFile(path.join(root, 'evil', `f${index}.txt`), `${'a'.repeat(40)}b\n`.repeat(10));
    }
    const figures = await measure('search_files (a+)+$ over 8 files', 'search_files', {
      pattern: '(a+)+$',
      regex: true,
      path: 'evil',
    });
    expect(figures.observation).toMatchObject({ ok: true });
    expect(figures.observation.ok ? figures.observation.output : '').toContain(
      `… stopped early: the regex ran for more than ${SEARCH_FILES_REGEX_BUDGET_MS} ms on evil/f0.txt and was stopped`,
    );
    expectBounded(figures);
  });

  it('search_files: a slow (not catastrophic) regex over many files, some near the size limit', async () => {
    await mkdir(path.join(root, 'many'));
    // Each large file takes the regex a hundred milliseconds or more: well under its budget, but
    // eight of them were scanned one after another on the main thread.
    const line = 'call(alpha, beta, gamma, delta, epsilon, zeta, eta, theta); // list\n';
    const large = line.repeat(Math.floor((SEARCH_FILES_MAX_FILE_BYTES - 1) / line.length));
    for (let index = 0; index < 8; index++) {
      await writeFile(path.join(root, 'many', `large${index}.ts`), large);
    }
    for (let index = 0; index < 2000; index++) {
      await writeFile(path.join(root, 'many', `small${index}.ts`), line.repeat(20));
    }
    const pattern = '(\\w+\\s*,\\s*)+omega';
    const figures = await measure('search_files slow regex over 2008 files (16 MiB)', 'search_files', {
      pattern,
      regex: true,
      path: 'many',
    });
    // On a machine busy enough to slow one file past the regex budget the search stops early, with
    // its note (at the first file, "1 file searched": seen in CI under load); the bounds hold either way.
    expect(figures.observation.ok ? figures.observation.output : message(figures.observation)).toMatch(
      /^No matches for .* in many \((2008 files searched|\d+ files? searched\)\n… stopped early: the regex ran for more than \d+ ms on many\/large\d\.ts and was stopped;.*)/,
    );
    expectBounded(figures);
  });
});
