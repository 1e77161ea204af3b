import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { markdownTables } from '../../bench/report.js';
import { BENCHMARKS, runSuite, SIZES } from '../../bench/suite.js';
import { openEnvironment } from '../../bench/support/environment.js';

// Runs `npm run bench -- --quick` once so the benchmarks cannot rot. It checks that every benchmark
// ran to the end and wrote well-formed results; it asserts no timing (this machine is shared and noisy).
describe('the benchmark suite in quick mode', () => {
  it('runs every benchmark and writes well-formed results', { timeout: 240_000 }, async () => {
    // A dev server of its own, as `npm run bench` starts one: the stock-server rows and the server's
    // CPU time and metrics exist only then.
    const environment = await openEnvironment({
      kind: 'start',
      keelBundlePath: inject('workflowBundlePath'),
      built: inject('builtKeel'),
      say: () => undefined,
    });
    const outputDirectory = await mkdtemp(path.join(tmpdir(), 'keel-bench-test-'));
    const quick = SIZES.quick;
    try {
      const report = await runSuite({
        environment,
        size: 'quick',
        outputDirectory,
        command: 'vitest',
        say: () => undefined,
      });
      const { results } = report;
      expect(report.server.startedByBench).toBe(true);
      expect(report.server.version).toMatch(/^\d+\.\d+/);

      const options = quick['per-step'];
      const steps = options.repetitions * (options.turns - 1);
      const perStep = results['per-step']!;
      expect(Object.keys(perStep.variants).sort()).toEqual(['plain', 'keel', 'agents', 'keelStock'].sort());
      expect(perStep.notMeasured).toEqual({});
      for (const variant of Object.values(perStep.variants)) {
        expect(variant.stepMs.count).toBe(steps);
        expect(variant.loop?.runMs.count).toBe(options.loopRuns);
      }
      for (const name of ['keel', 'keelStock', 'agents']) {
        const variant = perStep.variants[name]!;
        // The built worker and the peer run in processes of their own, measured from /proc.
        expect(variant.workerCpuMsPerStep).toBeGreaterThan(0);
        expect(variant.loop?.overheadMs?.count).toBe(options.loopRuns);
        expect(variant.breakdown?.steps).toBe(steps);
        // The peer's step is two workflow tasks. Keel's turns stream: each publish batch is a signal,
        // and so a workflow task more, as many as the model's pace makes (at least the two).
        if (name === 'agents') expect(variant.breakdown?.workflowTasksPerStep).toBe(2);
        else expect(variant.breakdown?.workflowTasksPerStep).toBeGreaterThanOrEqual(2);
        // The dev server's own metrics saw every workflow task of the variant's measured runs loaded
        // (activity tasks, on this server version, do not go through the transfer queue: count 0).
        expect(variant.serverLoad?.workflowTask.count).toBeGreaterThanOrEqual(steps * 2);
        expect(Number.isInteger(variant.serverLoad?.activityTask.count)).toBe(true);
      }
      expect(perStep.variants.plain?.serverLoad).toBeUndefined();
      expect(perStep.vercelLoopOverheadMs).toBe(900);
      for (const ratio of ['keel/plain', 'keel/agents', 'keel/keelStock'])
        expect(Number.isFinite(perStep.ratios[ratio]?.median), ratio).toBe(true);

      const concurrency = results.concurrency!;
      expect(concurrency.cases.map((entry) => [entry.agent, entry.runs, entry.completed])).toEqual(
        quick.concurrency.cases.map((entry) => [entry.agent, entry.runs, entry.runs]),
      );
      for (const entry of concurrency.cases) {
        expect(entry.workflowTaskLatency.count).toBeGreaterThanOrEqual(entry.runs * quick.concurrency.turns);
        expect(entry.worker.cpuMsPerStep).toBeGreaterThan(0);
        expect(entry.worker.peakRssMiB).toBeGreaterThanOrEqual(entry.worker.readyRssMiB);
        expect(entry.server?.cpuMsPerStep).toBeGreaterThan(0);
        expect(entry.workerCpuShare).toBeGreaterThan(0);
        expect(entry.workerCpuShare).toBeLessThan(1);
      }

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

      // The tables of BENCHMARKS.md show every measured row.
      const tables = markdownTables(report);
      for (const variant of Object.values(perStep.variants)) expect(tables).toContain(variant.label);
      expect(tables).toContain('TransferActiveTaskWorkflowTask');
      expect(tables).toContain('@temporalio/openai-agents');

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
