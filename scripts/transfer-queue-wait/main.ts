/**
 * A reproduction of the wait before every task, for an upstream report: `npx tsx
 * scripts/transfer-queue-wait/main.ts`. Starts `temporal server start-dev` twice, stock and with
 * `history.transferProcessorMaxPollRPS=1000`, runs the same loop of trivial activities on each, and
 * prints the time per step, the workflow tasks' schedule→start from their histories, and the server's
 * own `task_latency_load` (time from a transfer task's creation to its load by the queue reader).
 * Uses nothing of Keel but its way of finding the `temporal` CLI.
 */
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { silentLogger } from '../../test/support/loggers.js';
import { freePort } from '../../test/support/free-port.js';
import { locateTemporalCli } from '../../test/support/temporal-cli.js';

const { EventType } = proto.temporal.api.enums.v1;
const STEPS = 20;
const RUNS = 5;

interface Outcome {
  msPerStep: number[];
  scheduleToStartMs: number[];
  loadLatencyMs: Record<string, number>;
}

async function measure(binary: string, dynamicConfig: string[]): Promise<Outcome> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const server = spawn(
    binary,
    ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)]
      .concat(['--metrics-port', String(metricsPort), '--log-level', 'error'])
      .concat(dynamicConfig.flatMap((setting) => ['--dynamic-config-value', setting])),
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    const address = `127.0.0.1:${port}`;
    const connection = await connectWhenServing(address);
    const client = new Client({ connection });
    const workerConnection = await NativeConnection.connect({ address });
    const taskQueue = `transfer-wait-${port}`;
    const worker = await Worker.create({
      connection: workerConnection,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: new URL('./workflows.ts', import.meta.url).pathname,
        logger: silentLogger,
      }),
      activities: { echo: (value: number) => Promise.resolve(value) },
    });
    const outcome: Outcome = { msPerStep: [], scheduleToStartMs: [], loadLatencyMs: {} };
    await worker.runUntil(async () => {
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        const handle = await client.workflow.start('trivialLoop', {
          taskQueue,
          workflowId: `${taskQueue}-${run}`,
          args: [STEPS],
        });
        await handle.result();
        outcome.msPerStep.push((performance.now() - started) / STEPS);
        outcome.scheduleToStartMs.push(...scheduleToStart((await handle.fetchHistory()).events ?? []));
      }
    });
    await workerConnection.close();
    await connection.close();
    outcome.loadLatencyMs = await loadLatencies(metricsPort);
    return outcome;
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
}

/** Each workflow task's wait between its scheduled and started events, in ms. */
function scheduleToStart(events: proto.temporal.api.history.v1.IHistoryEvent[]): number[] {
  const time = (event: proto.temporal.api.history.v1.IHistoryEvent) =>
    Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  return events
    .filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
    .map((started) => {
      const scheduled = byId.get(Number(started.workflowTaskStartedEventAttributes?.scheduledEventId));
      return scheduled ? time(started) - time(scheduled) : Number.NaN;
    });
}

/** Mean `task_latency_load` by transfer task type, from the server's Prometheus endpoint. */
async function loadLatencies(metricsPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const totals = new Map<string, { sum: number; count: number }>();
  for (const match of text.matchAll(
    /^task_latency_load_(sum|count)\{[^}]*task_type="(TransferActiveTask\w+)"[^}]*\} (\S+)$/gmu,
  )) {
    const [, kind, type, value] = match as unknown as [string, 'sum' | 'count', string, string];
    const total = totals.get(type) ?? { sum: 0, count: 0 };
    total[kind] += Number(value);
    totals.set(type, total);
  }
  return Object.fromEntries(
    [...totals].map(([type, { sum, count }]) => [type, count > 0 ? (sum / count) * 1000 : Number.NaN]),
  );
}

async function connectWhenServing(address: string): Promise<Connection> {
  for (let attempt = 0; ; attempt++) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      return connection;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function quantile(values: number[], q: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!.toFixed(1);
}

Runtime.install({ logger: silentLogger });
const executable = await locateTemporalCli();
if (executable.type !== 'existing-path')
  throw new Error('needs the temporal CLI on PATH or TEMPORAL_CLI_PATH');
for (const [label, settings] of [
  ['stock dev server', []],
  ['history.transferProcessorMaxPollRPS=1000', ['history.transferProcessorMaxPollRPS=1000']],
] as const) {
  const outcome = await measure(executable.path, [...settings]);
  console.log(
    `${label}: ${quantile(outcome.msPerStep, 0.5)} ms per step (median of ${RUNS} runs of ${STEPS}); ` +
      `workflow task schedule→start median ${quantile(outcome.scheduleToStartMs, 0.5)} ms, ` +
      `p90 ${quantile(outcome.scheduleToStartMs, 0.9)} ms; server task_latency_load mean ` +
      Object.entries(outcome.loadLatencyMs)
        .map(([type, ms]) => `${type.replace('TransferActiveTask', '')} ${ms.toFixed(1)} ms`)
        .join(', '),
  );
}
