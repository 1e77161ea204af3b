/**
 * 200 concurrent 10-turn runs at 500 ms model latency against the real Temporal server on PostgreSQL
 * and against the dev server, alternating, on Keel's built worker in its own process (defaults): wall
 * time, and the CPU of the server, the database (the postmaster and every backend) and the worker.
 *   npx tsx scripts/cluster/measure.ts [--runs 200] [--rounds 2]
 * Builds the server first when the cache lacks it (scripts/cluster/temporal-server.sh).
 */
import { readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { benchConcurrency } from '../../bench/concurrency.js';
import type { ConcurrencyCaseResult } from '../../bench/concurrency.js';
import { openEnvironment } from '../../bench/support/environment.js';
import type { BenchEnvironment } from '../../bench/support/environment.js';
import { round } from '../../bench/support/stats.js';
import {
  ClusterServer,
  createNamespace,
  setUpSchema,
  temporalServerBuild,
} from '../../test/cluster/support/temporal-server.js';
import { startPostgres } from '../../test/support/postgres.js';
import { locateTemporalCli } from '../../test/support/temporal-cli.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '200' }, rounds: { type: 'string', default: '2' } },
});
const RUNS = Number(values.runs);
const ROUNDS = Number(values.rounds);
const TURNS = 10;
const MODEL_LATENCY_MS = 500;

/** CPU seconds of a process and its children: the live ones, and those it has waited for. */
async function treeCpuSeconds(root: number): Promise<number> {
  const fields = async (pid: number) => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const own = await fields(root);
  // utime, stime, cutime, cstime: fields 14–17 of stat, 11–14 after the command name.
  let ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(own[index] ?? 0), 0);
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/u.test(name) || Number(name) === root) continue;
    const child = await fields(Number(name));
    if (Number(child[1]) === root) ticks += Number(child[11] ?? 0) + Number(child[12] ?? 0);
  }
  return ticks / 100;
}

interface Row {
  server: string;
  result: ConcurrencyCaseResult;
  databaseCpuSeconds?: number;
}

async function measure(
  label: string,
  environment: BenchEnvironment,
  databasePid?: () => Promise<number>,
): Promise<Row> {
  const before = databasePid && (await treeCpuSeconds(await databasePid()));
  const { cases } = await benchConcurrency(
    environment,
    { cases: [{ runs: RUNS, agent: 'keel' }], turns: TURNS, modelLatencyMs: MODEL_LATENCY_MS },
    (line) => console.error(`${label}: ${line}`),
  );
  const after = databasePid && (await treeCpuSeconds(await databasePid()));
  return {
    server: label,
    result: cases[0]!,
    ...(before === undefined || after === undefined ? {} : { databaseCpuSeconds: round(after - before) }),
  };
}

const executable = await locateTemporalCli();
if (executable.type !== 'existing-path') throw new Error('needs the temporal CLI for create-namespace.sh');
const build = await temporalServerBuild();
const postgres = await startPostgres();
let server: ClusterServer | undefined;
const environments: BenchEnvironment[] = [];
try {
  await setUpSchema(build, postgres);
  server = await ClusterServer.start(build, postgres);
  await createNamespace(server, executable.path, 'default');
  const dev = await openEnvironment({ kind: 'start' });
  environments.push(dev);
  const clusterBase = await openEnvironment({
    kind: 'existing',
    address: server.address,
    namespace: 'default',
    keelBundlePath: dev.keelBundle.codePath,
    built: dev.built,
  });
  environments.push(clusterBase);
  const cluster: BenchEnvironment = { ...clusterBase, serverPid: server.pid };
  console.error(`dev server ${dev.serverVersion}; cluster server ${cluster.serverVersion} on PostgreSQL`);
  const rows: Row[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    rows.push(await measure('dev server', dev));
    rows.push(await measure('PostgreSQL cluster', cluster, () => postgres.pid()));
  }
  console.log(
    `| server | runs | completed | wall s | steps/s | server CPU s (ms/step) | database CPU s | worker CPU s (ms/step) |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { server: label, result, databaseCpuSeconds } of rows)
    console.log(
      `| ${label} | ${result.runs} | ${result.completed} | ${result.wallSeconds} | ${result.stepsPerSecond} | ` +
        `${result.server?.cpuSeconds ?? '?'} (${result.server?.cpuMsPerStep ?? '?'}) | ${databaseCpuSeconds ?? '—'} | ` +
        `${result.worker.cpuSeconds} (${result.worker.cpuMsPerStep}) |`,
    );
} finally {
  for (const environment of environments.reverse()) await environment.close();
  await server?.stop();
  await postgres.close();
}
