/**
 * What streaming costs (issue 24), with a model that streams at a realistic rate: 16-character deltas
 * every 40 ms, 1,600 characters per turn, a 6-turn run with 5 no-op calls. For one run at a time:
 * history events, bytes, workflow tasks, signals and updates per run and per turn, worker and
 * dev-server CPU per turn, without a subscriber, with one (`KeelClient.stream`, counting the text
 * events and characters it hands over), with a model that answers at once, and with `stream: false`
 * (the history of a run that does not stream); time to first token from `startRun` against calling
 * the model directly; N concurrent runs with a subscriber each; and the same run built on
 * `@temporalio/workflow-streams`. Keel is its built worker in its own process with default settings.
 * Signals and updates are counted whatever the design: since issue 24 Keel's text leaves the worker
 * out of band (its live hub), so for Keel both should be 0 and a subscriber should add no event.
 *
 * `npx tsx bench/stream-cost.ts [--runs 3] [--ttft-runs 10] [--concurrent 200] [--concurrent-turns 6]
 * [--deadline 300] [--no-workflow-streams] [--streams-batch-ms 50]`; prints numbers, asserts nothing.
 * `--runs 0`, `--ttft-runs 0` or `--concurrent 0` leave that part out; runs still going at the
 * deadline are terminated and counted.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import OpenAI from 'openai';
import { KeelClient } from '../src/client.js';
import { startDistWorker } from './support/dist-worker.js';
import { openEnvironment } from './support/environment.js';
import type { BenchEnvironment } from './support/environment.js';
import { historyCost } from './support/history-cost.js';
import type { HistoryCost } from './support/history-cost.js';
import { mapLimit } from './support/pool.js';
import { processCpuSeconds } from './support/process-usage.js';
import { distribution, round } from './support/stats.js';
import type { Distribution } from './support/stats.js';
import { StreamingModel, streamingTask, turnRequest } from './support/streaming-model.js';
import type { StreamingPlan } from './support/streaming-model.js';
import { EVENTS_TOPIC } from './workflow-streams/events.js';
import type { StreamedEvent } from './workflow-streams/events.js';
import { startWorkflowStreamsWorker } from './workflow-streams/worker.js';

const flag = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const RUNS = flag('runs', 3);
const TTFT_RUNS = flag('ttft-runs', 10);
const CONCURRENT = flag('concurrent', 200);
const CONCURRENT_TURNS = flag('concurrent-turns', 6);
const DEADLINE_SECONDS = flag('deadline', 300);
const WORKFLOW_STREAMS = !process.argv.includes('--no-workflow-streams');
const TURNS = 6;
/** Keel publishes a batch every 50 ms; the comparison's publisher batches the same unless told (its default is 2 s). */
const WORKFLOW_STREAMS_BATCH_MS = flag('streams-batch-ms', 50);

const REALISTIC: StreamingPlan = { turnChars: 1_600, deltaChars: 16, deltaMs: 40 };
const AT_ONCE: StreamingPlan = { ...REALISTIC, deltaMs: undefined };

/** How to run one run of a row, whichever agent it is. */
interface Agent {
  workerPid: number;
  start(runKey: string, turns: number): Promise<string>;
  /** Reads the run's stream to its end; calls `onText` at each text event with its characters. */
  subscribe(runId: string, onText: (chars: number) => void): Promise<void>;
  /** Waits for the run's end; its status (`completed` when it did). */
  wait(runId: string): Promise<string>;
}

/** What a row of the table measured. */
interface Row {
  label: string;
  runs: number;
  completed: number;
  /** Mean per run. */
  history: HistoryCost;
  workerCpuMsPerTurn: number;
  serverCpuMsPerTurn: number;
  textEventsPerRun: number;
  /** Characters of text the subscriber got per run (the model writes turnChars × TURNS). */
  textCharsPerRun: number;
  runSeconds: Distribution;
  load: string;
}

const say = (line: string): void => console.error(line);
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const cpu = async (pid: number | undefined): Promise<number> =>
  pid === undefined ? Number.NaN : ((await processCpuSeconds(pid)) ?? Number.NaN);

function meanCost(costs: readonly HistoryCost[]): HistoryCost {
  const mean = (pick: (cost: HistoryCost) => number): number =>
    costs.length === 0
      ? Number.NaN
      : round(costs.reduce((sum, cost) => sum + pick(cost), 0) / costs.length, 1);
  return {
    events: mean((cost) => cost.events),
    bytes: mean((cost) => cost.bytes),
    serverBytes: mean((cost) => cost.serverBytes),
    workflowTasks: mean((cost) => cost.workflowTasks),
    signals: mean((cost) => cost.signals),
    updates: mean((cost) => cost.updates),
    activities: mean((cost) => cost.activities),
  };
}

/** `runs` runs one after another (so CPU belongs to one run), with or without a subscriber each. */
async function measureRow(
  environment: BenchEnvironment,
  label: string,
  agent: Agent,
  options: { runs: number; subscriber: boolean },
): Promise<Row> {
  const before = { worker: await cpu(agent.workerPid), server: await cpu(environment.serverPid) };
  const costs: HistoryCost[] = [];
  const seconds: number[] = [];
  let completed = 0;
  let texts = 0;
  let chars = 0;
  for (let run = 0; run < options.runs; run++) {
    const started = performance.now();
    const runId = await agent.start(randomUUID(), TURNS);
    const reading = options.subscriber
      ? agent.subscribe(runId, (count) => {
          texts += 1;
          chars += count;
        })
      : Promise.resolve();
    const status = await agent.wait(runId);
    await reading;
    seconds.push((performance.now() - started) / 1000);
    if (status === 'completed') completed += 1;
    else say(`${label}: run ${runId} ended ${status}`);
    costs.push(await historyCost(environment.client, runId));
  }
  const after = { worker: await cpu(agent.workerPid), server: await cpu(environment.serverPid) };
  const turns = options.runs * TURNS;
  const row: Row = {
    label,
    runs: options.runs,
    completed,
    history: meanCost(costs),
    workerCpuMsPerTurn: round(((after.worker - before.worker) * 1000) / turns, 1),
    serverCpuMsPerTurn: round(((after.server - before.server) * 1000) / turns, 1),
    textEventsPerRun: round(texts / options.runs, 1),
    textCharsPerRun: round(chars / options.runs, 1),
    runSeconds: distribution(seconds),
    load: load(),
  };
  say(`${label}: ${JSON.stringify(row)}`);
  return row;
}

/** Milliseconds from the start of a 1-turn run to its first text event through the agent's stream. */
async function firstTokens(agent: Agent, runs: number): Promise<Distribution> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    let first: number | undefined;
    const runId = await agent.start(randomUUID(), 1);
    await agent.subscribe(runId, () => (first ??= performance.now() - started));
    await agent.wait(runId);
    times.push(first ?? Number.NaN);
  }
  return distribution(times);
}

/** Milliseconds from the request to the first text delta, calling the model directly (`openai`, `stream: true`). */
async function directFirstTokens(modelUrl: string, runs: number): Promise<Distribution> {
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: modelUrl });
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const events = await openai.responses.create({
      model: 'bench-model',
      input: [{ role: 'user', content: turnRequest(randomUUID(), 1, 1) }],
      stream: true,
    });
    let first: number | undefined;
    for await (const event of events) {
      if (event.type === 'response.output_text.delta') first ??= performance.now() - started;
    }
    times.push(first ?? Number.NaN);
  }
  return distribution(times);
}

/** What the concurrency row measured. */
interface ConcurrencyRow {
  runs: number;
  turns: number;
  completed: number;
  /** Runs still going at the deadline (terminated then). */
  unfinished: number;
  /** How the runs that ended before the deadline ended, by status (`completed`, or the error). */
  endings: Record<string, number>;
  /** Subscribers that failed (their first error's message, and how many). */
  subscriberErrors: { count: number; first?: string };
  wallSeconds: number;
  firstTokenMs: Distribution;
  /** Mean per completed run. */
  history: HistoryCost;
  textEventsPerRun: number;
  textCharsPerRun: number;
  workerCpuMsPerTurn: number;
  serverCpuMsPerTurn: number;
  load: string;
}

/** `runs` runs started at once (50 starts at a time), each with its own subscriber, until they end or the deadline. */
async function measureConcurrency(
  environment: BenchEnvironment,
  agent: Agent,
  runs: number,
  turns: number,
): Promise<ConcurrencyRow> {
  const before = { worker: await cpu(agent.workerPid), server: await cpu(environment.serverPid) };
  const started = performance.now();
  const deadline = new Promise<'deadline'>((resolve) => {
    setTimeout(() => resolve('deadline'), DEADLINE_SECONDS * 1000).unref();
  });
  const firsts: number[] = [];
  const ended: Array<{ runId: string; status: string; texts: number; chars: number }> = [];
  const ids: string[] = [];
  const subscriberErrors: { count: number; first?: string } = { count: 0 };
  const all = mapLimit(Array.from({ length: runs }), 50, async () => {
    const runStarted = performance.now();
    const runId = await agent.start(randomUUID(), turns);
    ids.push(runId);
    let first: number | undefined;
    let count = 0;
    let chars = 0;
    const reading = agent
      .subscribe(runId, (size) => {
        first ??= performance.now() - runStarted;
        count += 1;
        chars += size;
      })
      .catch((error: unknown) => {
        subscriberErrors.count += 1;
        subscriberErrors.first ??= (error as Error).message;
      });
    const status = await agent.wait(runId).catch((error: unknown) => `error: ${(error as Error).message}`);
    await reading;
    ended.push({ runId, status, texts: count, chars });
    if (first !== undefined) firsts.push(first);
  });
  const outcome = await Promise.race([all.then(() => 'all' as const), deadline]);
  const wallSeconds = round((performance.now() - started) / 1000, 1);
  const after = { worker: await cpu(agent.workerPid), server: await cpu(environment.serverPid) };
  // What ended before the deadline; the runs terminated at it are left out.
  const settled = ended.slice();
  const finished = new Set(settled.map((entry) => entry.runId));
  const unfinished = ids.filter((id) => !finished.has(id));
  if (outcome === 'deadline') {
    say(
      `concurrency: ${unfinished.length} runs still going at the ${DEADLINE_SECONDS} s deadline; terminating them`,
    );
    await mapLimit(unfinished, 20, (id) =>
      environment.client.workflow
        .getHandle(id)
        .terminate('stream-cost deadline')
        .catch(() => undefined),
    );
    // The terminated runs' waits and subscribers end now; nothing may still call the server once it closes.
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 60_000).unref())]);
  }
  const endings: Record<string, number> = {};
  for (const { status } of settled) {
    const key = status.slice(0, 80);
    endings[key] = (endings[key] ?? 0) + 1;
  }
  const completedRuns = settled.filter((entry) => entry.status === 'completed');
  const completedIds = completedRuns.map((entry) => entry.runId);
  const costs = await mapLimit(completedIds, 10, (id) => historyCost(environment.client, id));
  const turnsDone = completedIds.length * turns;
  return {
    runs,
    turns,
    completed: completedIds.length,
    unfinished: unfinished.length,
    endings,
    subscriberErrors,
    wallSeconds,
    firstTokenMs: distribution(firsts),
    history: meanCost(costs),
    textEventsPerRun: round(
      completedRuns.reduce((sum, entry) => sum + entry.texts, 0) / Math.max(1, completedRuns.length),
      1,
    ),
    textCharsPerRun: round(
      completedRuns.reduce((sum, entry) => sum + entry.chars, 0) / Math.max(1, completedRuns.length),
      1,
    ),
    // Over the completed runs' turns; the unfinished runs' work up to the deadline is in it too.
    workerCpuMsPerTurn: round(((after.worker - before.worker) * 1000) / Math.max(1, turnsDone), 1),
    serverCpuMsPerTurn: round(((after.server - before.server) * 1000) / Math.max(1, turnsDone), 1),
    load: load(),
  };
}

function keelAgent(keel: KeelClient, workerPid: number, options: { stream?: boolean } = {}): Agent {
  return {
    workerPid,
    start: (runKey, turns) => keel.startRun({ task: streamingTask(runKey, turns), ...options }),
    async subscribe(runId, onText) {
      for await (const { event } of keel.stream(runId)) if (event.type === 'text') onText(event.delta.length);
    },
    wait: async (runId) => (await keel.waitForResult(runId)).status,
  };
}

function workflowStreamsAgent(
  environment: BenchEnvironment,
  bench: Awaited<ReturnType<typeof startWorkflowStreamsWorker>>,
): Agent {
  return {
    workerPid: bench.worker.pid,
    start: (runKey, turns) => bench.start({ runKey, turns, batchMs: WORKFLOW_STREAMS_BATCH_MS }),
    async subscribe(runId, onText) {
      const events = WorkflowStreamClient.create(environment.client, runId).topic<StreamedEvent>(
        EVENTS_TOPIC,
      );
      for await (const { data } of events.subscribe(0)) {
        if (data.type === 'text') onText(data.delta.length);
        if (data.type === 'end') return;
      }
    },
    async wait(runId) {
      await environment.client.workflow.getHandle(runId).result();
      return 'completed';
    },
  };
}

function printRows(rows: readonly Row[]): void {
  const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
  console.log(
    '| run (6 turns, 5 calls) | runs ok | events / run | per turn | history KB / run | per turn | ' +
      'server-counted KB / run | workflow tasks / turn | signals / turn | updates / turn | worker CPU ms / turn | server CPU ms / turn | ' +
      'text events / run | text chars / run | run s (median) | load avg 1/5/15 |',
  );
  console.log(`|${' --- |'.repeat(16)}`);
  for (const row of rows) {
    const { history } = row;
    console.log(
      `| ${row.label} | ${row.completed}/${row.runs} | ${history.events} | ${round(history.events / TURNS, 1)} | ` +
        `${kb(history.bytes)} | ${kb(history.bytes / TURNS)} | ${kb(history.serverBytes)} | ${round(history.workflowTasks / TURNS, 1)} | ` +
        `${round(history.signals / TURNS, 1)} | ${round(history.updates / TURNS, 1)} | ${row.workerCpuMsPerTurn} | ` +
        `${row.serverCpuMsPerTurn} | ${row.textEventsPerRun} | ${row.textCharsPerRun} | ${row.runSeconds.median} | ${row.load} |`,
    );
  }
}

function printConcurrency(row: ConcurrencyRow): void {
  const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
  const { history } = row;
  console.log(`\nConcurrency, Keel: ${row.runs} runs of ${row.turns} turns at once, a subscriber each:`);
  console.log(
    `  ${row.completed} completed, ${row.unfinished} unfinished at the ${DEADLINE_SECONDS} s deadline (terminated); ` +
      `wall ${row.wallSeconds} s; endings before it ${JSON.stringify(row.endings)}; ` +
      `subscribers failed ${row.subscriberErrors.count}${row.subscriberErrors.first ? ` (${row.subscriberErrors.first})` : ''}`,
  );
  console.log(
    `  per completed run: ${history.events} events, ${kb(history.bytes)} KB (server-counted ${kb(history.serverBytes)} KB), ` +
      `${history.signals} signals, ${history.updates} updates, ${history.workflowTasks} workflow tasks, ` +
      `${row.textEventsPerRun} text events (${row.textCharsPerRun} characters) read`,
  );
  console.log(
    `  CPU per completed turn: worker ${row.workerCpuMsPerTurn} ms, server ${row.serverCpuMsPerTurn} ms; ` +
      `first token from each run's start (ms) ${JSON.stringify(row.firstTokenMs)}; load ${row.load}`,
  );
}

say(`stream-cost: load average at start ${load()}`);
const environment = await openEnvironment({ kind: 'start', say });
const realistic = await StreamingModel.start(REALISTIC);
const atOnce = await StreamingModel.start(AT_ONCE);
const stops: Array<() => Promise<unknown>> = [];
try {
  const workerOf = async (modelUrl: string) => {
    const started = await startDistWorker({
      built: environment.built,
      address: environment.address,
      namespace: environment.namespace,
      modelUrl,
      directory: environment.directory,
    });
    stops.push(() => started.worker.stop());
    return { client: new KeelClient(environment.client, started.taskQueue), pid: started.worker.pid };
  };
  const realisticWorker = await workerOf(realistic.url);
  const keel = keelAgent(realisticWorker.client, realisticWorker.pid);
  const atOnceWorker = await workerOf(atOnce.url);
  const keelAtOnce = keelAgent(atOnceWorker.client, atOnceWorker.pid);
  const rows: Row[] = [];
  if (RUNS > 0) {
    rows.push(await measureRow(environment, 'Keel, no subscriber', keel, { runs: RUNS, subscriber: false }));
    rows.push(await measureRow(environment, 'Keel, one subscriber', keel, { runs: RUNS, subscriber: true }));
    rows.push(
      await measureRow(environment, 'Keel, model answers at once, no subscriber', keelAtOnce, {
        runs: RUNS,
        subscriber: false,
      }),
    );
    // The same worker and model, the run asking for whole answers: the history of a run that does not stream.
    const keelWhole = keelAgent(realisticWorker.client, realisticWorker.pid, { stream: false });
    rows.push(
      await measureRow(environment, 'Keel, stream: false (whole answers), no subscriber', keelWhole, {
        runs: RUNS,
        subscriber: false,
      }),
    );
  }
  const direct = TTFT_RUNS > 0 ? await directFirstTokens(realistic.url, TTFT_RUNS) : undefined;
  const throughKeel = TTFT_RUNS > 0 ? await firstTokens(keel, TTFT_RUNS) : undefined;
  let throughStreams: Distribution | undefined;
  if (WORKFLOW_STREAMS && (RUNS > 0 || TTFT_RUNS > 0)) {
    const bench = await startWorkflowStreamsWorker(environment, realistic.url);
    stops.push(() => bench.worker.stop());
    const streams = workflowStreamsAgent(environment, bench);
    const label = `@temporalio/workflow-streams (${WORKFLOW_STREAMS_BATCH_MS} ms batches)`;
    if (RUNS > 0) {
      rows.push(
        await measureRow(environment, `${label}, no subscriber`, streams, { runs: RUNS, subscriber: false }),
      );
      rows.push(
        await measureRow(environment, `${label}, one subscriber`, streams, { runs: RUNS, subscriber: true }),
      );
    }
    if (TTFT_RUNS > 0) throughStreams = await firstTokens(streams, TTFT_RUNS);
  }
  let concurrency: ConcurrencyRow | undefined;
  if (CONCURRENT > 0) {
    say(`concurrency: ${CONCURRENT} runs of ${CONCURRENT_TURNS} turns, a subscriber each…`);
    concurrency = await measureConcurrency(environment, keel, CONCURRENT, CONCURRENT_TURNS);
  }

  console.log(
    `\nstream-cost: server ${environment.serverVersion}; model: ${REALISTIC.turnChars} characters per turn in ` +
      `${REALISTIC.deltaChars}-character deltas every ${REALISTIC.deltaMs} ms; ${TURNS} turns, ${TURNS - 1} no-op calls.\n`,
  );
  if (rows.length > 0) printRows(rows);
  if (direct !== undefined && throughKeel !== undefined) {
    console.log(
      `\nTime to first token, ms (${TTFT_RUNS} 1-turn runs, from the start to the first text event):`,
    );
    console.log(`  the model called directly (openai SDK, stream: true): ${JSON.stringify(direct)}`);
    console.log(`  through Keel (startRun → KeelClient.stream): ${JSON.stringify(throughKeel)}`);
  }
  if (throughStreams !== undefined) {
    console.log(
      `  through @temporalio/workflow-streams (start → subscribe): ${JSON.stringify(throughStreams)}`,
    );
  }
  if (concurrency !== undefined) printConcurrency(concurrency);
  const problems = [...realistic.problems, ...atOnce.problems];
  if (problems.length > 0) console.log(`\nmodel server problems: ${problems.slice(0, 5).join('; ')}`);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await realistic.close();
  await atOnce.close();
  await environment.close();
}
