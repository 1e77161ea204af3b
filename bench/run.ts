/**
 * `npm run bench [-- --quick | --size default|full] [--only per-step,concurrency,history,recovery]
 * [--out <directory>] [--address host:port [--namespace ns]]`: starts a local Temporal dev server (or
 * uses the existing server at `--address`), runs the benchmarks, writes `<out>/<name>.json` and
 * prints a summary. A default or full run on a dev server it started also rewrites the generated
 * part of BENCHMARKS.md, so every number there comes from that one command.
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
import { openEnvironment, UnreachableServerError } from './support/environment.js';
import { installBenchRuntime } from './support/metrics.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsDirectory = path.join(root, 'bench', 'results');
const MARKER_START = '<!-- bench:results:start -->';
const MARKER_END = '<!-- bench:results:end -->';

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(
    'usage: npm run bench -- [--quick | --size quick|default|full] [--only per-step,concurrency,history,recovery] [--out DIR]\n' +
      '                        [--address HOST:PORT [--namespace NAMESPACE]]   (an existing server instead of a dev server)\n' +
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
      address: { type: 'string' },
      namespace: { type: 'string' },
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
  if (values.namespace !== undefined && values.address === undefined)
    usage('--namespace names a namespace of the server given by --address');
  if (values.address !== undefined && !/^[^\s:/]+:\d{1,5}$/.test(values.address))
    usage(`--address must be host:port, not ${JSON.stringify(values.address)}`);
  const size = values.quick ? 'quick' : (values.size ?? 'default');
  if (!(size in SIZES)) usage(`unknown size ${size}`);
  const only = values.only?.split(',').map((name) => name.trim());
  const unknown = only?.filter((name) => !(BENCHMARKS as readonly string[]).includes(name)) ?? [];
  if (unknown.length > 0) usage(`unknown benchmark(s) ${unknown.join(', ')}`);
  // bench/results holds the dev server's numbers behind BENCHMARKS.md: other servers' go elsewhere.
  const outputDirectory = path.resolve(
    values.out ??
      (size === 'quick'
        ? path.join(tmpdir(), 'keel-bench-quick')
        : values.address !== undefined
          ? path.join(tmpdir(), 'keel-bench-address')
          : path.join(root, 'bench', 'results')),
  );
  const command = [
    'npm run bench',
    ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
  ].join(' ');

  await installBenchRuntime();
  const existing = values.address;
  console.error(
    existing === undefined
      ? 'Starting a Temporal dev server and bundling the workflows…'
      : `Connecting to the Temporal server at ${existing} and bundling the workflows…`,
  );
  const environment = await openEnvironment(
    existing === undefined
      ? { kind: 'start' }
      : { kind: 'existing', address: existing, namespace: values.namespace ?? 'default' },
  ).catch((error: unknown) => {
    if (!(error instanceof UnreachableServerError)) throw error;
    console.error(error.message);
    process.exit(2);
  });
  console.error(
    `Temporal server ${environment.address} (namespace ${environment.namespace}): version ${environment.serverVersion}` +
      (existing === undefined ? '' : '; its CPU is not measured (n/a)'),
  );
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
      server: report.server,
      startedAt: report.startedAt,
      wallSeconds: report.wallSeconds,
    };
    await writeFile(path.join(outputDirectory, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
    console.log(`results: ${outputDirectory}`);
    // The tables of BENCHMARKS.md are the dev server's; numbers of another server go to --out only.
    if (size !== 'quick' && only === undefined && existing === undefined)
      await updateBenchmarksMarkdown(markdownTables(report));
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
