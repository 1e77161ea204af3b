import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { BENCHMARKS, runSuite, SIZES } from '../../bench/suite.js';
import { openEnvironment } from '../../bench/support/environment.js';

// Runs `npm run bench -- --quick` once so the benchmarks cannot rot. It checks that every benchmark
// ran to the end and wrote well-formed results; it asserts no timing (this machine is shared and noisy).
describe('the benchmark suite in quick mode', () => {
  it('runs every benchmark and writes well-formed results', { timeout: 180_000 }, async () => {
    const environment = await openEnvironment({
      kind: 'existing',
      address: inject('temporalAddress'),
      namespace: inject('temporalNamespace'),
      keelBundlePath: inject('workflowBundlePath'),
    });
    const outputDirectory = await mkdtemp(path.join(tmpdir(), 'keel-bench-test-'));
    const quick = SIZES.quick;
    try {
      const { results } = await runSuite({
        environment,
        size: 'quick',
        outputDirectory,
        command: 'vitest',
        say: () => undefined,
      });

      const steps = quick['per-step'].repetitions * (quick['per-step'].turns - 1);
      const perStep = results['per-step']!;
      expect(perStep.variants.plain?.stepMs.count).toBe(steps);
      expect(perStep.variants.keel?.stepMs.count).toBe(steps);
      expect(perStep.variants.keel?.breakdown).toMatchObject({ steps, workflowTasksPerStep: 2 });
      expect(Number.isFinite(perStep.ratios['keel/plain']?.median)).toBe(true);

      const [concurrency] = results.concurrency!.cases;
      const runs = quick.concurrency.cases[0]!.runs;
      expect(concurrency).toMatchObject({ runs, completed: runs });
      expect(concurrency!.workflowTaskLatency.count).toBeGreaterThanOrEqual(runs * quick.concurrency.turns);
      expect(concurrency!.worker.peakRssMiB).toBeGreaterThan(0);

      const history = results.history!;
      const chained = history.cases.filter((entry) => entry.conversation === 'chained');
      expect(chained.map((entry) => entry.observationChars)).toEqual(quick.history.observationSizes);
      const [small, large] = chained;
      expect(small!.perStep.events).toBeGreaterThan(0);
      expect(large!.perStep.bytes).toBeGreaterThan(small!.perStep.bytes + 12_000);
      expect(small!.turnsUntilSuggested.first).toBeGreaterThan(quick.history.turns);

      const recovery = results.recovery!;
      expect(recovery.kills.map((entry) => [entry.completed, entry.toolRestartedMs.count])).toEqual([[1, 1]]);
      expect(recovery.cancels.map((entry) => entry.abortSignalMs.count)).toEqual([1]);

      for (const name of BENCHMARKS) {
        const written = JSON.parse(await readFile(path.join(outputDirectory, `${name}.json`), 'utf8')) as {
          size: string;
          result: unknown;
        };
        expect(written.size).toBe('quick');
        expect(written.result).toEqual(JSON.parse(JSON.stringify(results[name])));
      }
    } finally {
      await environment.close();
      await rm(outputDirectory, { recursive: true, force: true });
    }
  });
});
