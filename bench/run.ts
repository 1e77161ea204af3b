/**
 * `npm run bench [-- --quick | --size default|full] [--only per-step,concurrency,history,recovery]
 * [--out <directory>]`: starts a local Temporal dev server, runs the benchmarks, writes
 * `<out>/<name>.json` and prints a summary. A default or full run also rewrites the generated part of
 * BENCHMARKS.md, so every number there comes from that one command.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { markdownTables } from './report.js';
import { BENCHMARKS, runSuite, SIZES, summarize } from './suite.js';
import type { BenchmarkName, SuiteReport } from './suite.js';
import { openEnvironment } from './support/environment.js';
import { installBenchRuntime } from './support/metrics.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsDirectory = path.join(root, 'bench', 'results');
const MARKER_START = '<!-- bench:results:start -->';
const MARKER_END = '<!-- bench:results:end -->';

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(
    'usage: npm run bench -- [--quick | --size quick|default|full] [--only per-step,concurrency,history,recovery] [--out DIR]\n' +
      '       npm run bench -- --report   (re-render the tables of BENCHMARKS.md from bench/results)',
  );
  process.exit(2);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      size: { type: 'string' },
      only: { type: 'string' },
      out: { type: 'string' },
      report: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) usage();
  if (values.report) {
    // Re-renders the tables of BENCHMARKS.md from the saved results of the last default or full run.
    await updateBenchmarksMarkdown(
      markdownTables(await savedReport(path.resolve(values.out ?? resultsDirectory))),
    );
    return;
  }
  const size = values.quick ? 'quick' : (values.size ?? 'default');
  if (!(size in SIZES)) usage(`unknown size ${size}`);
  const only = values.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !(BENCHMARKS as readonly string[]).includes(name)) ?? [];
  if (unknown.length > 0) usage(`unknown benchmark(s) ${unknown.join(', ')}`);
  const outputDirectory = path.resolve(
    values.out ??
      (size === 'quick' ? path.join(tmpdir(), 'keel-bench-quick') : path.join(root, 'bench', 'results')),
  );
  const command = [
    'npm run bench',
    ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
  ].join(' ');

  await installBenchRuntime();
  console.error('Starting a Temporal dev server and bundling the workflows…');
  const environment = await openEnvironment({ kind: 'start' });
  try {
    const report = await runSuite({
      environment,
      size: size as keyof typeof SIZES,
      ...(only ? { only: only as BenchmarkName[] } : {}),
      outputDirectory,
      command,
    });
    console.log(summarize(report).join('\n'));
    const run: Omit<SuiteReport, 'results'> = {
      command: report.command,
      size: report.size,
      machine: report.machine,
      startedAt: report.startedAt,
      wallSeconds: report.wallSeconds,
    };
    await writeFile(path.join(outputDirectory, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
    console.log(`results: ${outputDirectory}`);
    if (size !== 'quick' && only === undefined) await updateBenchmarksMarkdown(markdownTables(report));
  } finally {
    await environment.close();
  }
}

/** The report of the run whose results are in `directory` (`run.json` and `<name>.json`). */
async function savedReport(directory: string): Promise<SuiteReport> {
  const read = async (name: string): Promise<unknown> =>
    JSON.parse(await readFile(path.join(directory, `${name}.json`), 'utf8'));
  const run = (await read('run')) as Omit<SuiteReport, 'results'>;
  const results: SuiteReport['results'] = {};
  for (const name of BENCHMARKS) {
    const saved = (await read(name).catch(() => undefined)) as { result?: unknown } | undefined;
    if (saved?.result !== undefined) Object.assign(results, { [name]: saved.result });
  }
  return { ...run, results };
}

/** Replaces the generated section of BENCHMARKS.md with `tables`, formatted as the repository's Prettier does. */
async function updateBenchmarksMarkdown(tables: string): Promise<void> {
  const file = path.join(root, 'BENCHMARKS.md');
  const current = await readFile(file, 'utf8').catch(
    () => `# Benchmarks\n\n${MARKER_START}\n${MARKER_END}\n`,
  );
  const start = current.indexOf(MARKER_START);
  const end = current.indexOf(MARKER_END);
  if (start < 0 || end < start) {
    console.error(`BENCHMARKS.md has no ${MARKER_START} … ${MARKER_END} section; not updated`);
    return;
  }
  const updated = `${current.slice(0, start + MARKER_START.length)}\n\n${tables}\n${current.slice(end)}`;
  const options = (await resolveConfig(file)) ?? {};
  await writeFile(file, await format(updated, { ...options, filepath: file }));
  console.log(`updated ${file}`);
}

await main();
