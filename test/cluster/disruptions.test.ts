/**
 * Many concurrent runs on three worker processes (separate workspaces and state directories, as on
 * separate machines) against the real Temporal server on PostgreSQL, while workers are SIGKILLed,
 * the server is SIGKILLed and started again, and PostgreSQL crashes and starts again, all mid-run.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerProcess } from '../support/process/control.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { Cluster } from './support/cluster.js';

const RUNS = 24;
const CALLS_PER_RUN = 3;
/** How long the model takes to accept each turn and the tool works: long enough to be caught mid-run. */
const MODEL_MS = 150;
const TOOL_MS = 300;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await Cluster.start();
});
afterAll(async () => {
  await cluster?.close();
});

/**
 * Each run calls `work` at least CALLS_PER_RUN times, and goes on calling it while `disrupting()`, so
 * that no run ends before the last disruption; then it answers. The model reads the run and step
 * from the request, and a step out of order would show in the answer.
 */
function policy(request: RecordedRequest, disrupting: () => boolean): ScriptStep {
  const work = (label: string) => reply.calls({ name: 'work', arguments: { label, milliseconds: TOOL_MS } });
  const [item] = request.body.input;
  if (request.body.previous_response_id === undefined) return work(`${String(item?.content)}/1`);
  const match = /^worked:(.+)\/(\d+)$/u.exec(String(item?.output));
  if (match === null) return reply.text(`unexpected input ${JSON.stringify(item)}`);
  const step = Number(match[2]);
  return step < CALLS_PER_RUN || disrupting()
    ? work(`${match[1]}/${step + 1}`)
    : reply.text(`done ${match[1]}`);
}

describe('a cluster on PostgreSQL, three worker machines', () => {
  it('completes every run with its answer through worker, server and database crashes mid-run', async () => {
    let disrupting = true;
    const model = await ScriptedModel.start((request) =>
      reply.slowToAccept(
        policy(request, () => disrupting),
        delay(MODEL_MS),
      ),
    );
    try {
      const executions = new Map<string, number>();
      const finished = new Set<string>();
      let toolStarts = 0;
      type ToolStart = { worker: WorkerProcess; key: string };
      const waiting: Array<{ at: number; resolve: (start: ToolStart) => void }> = [];
      /** Resolves with the tool call that starts once `count` have started (across all workers). */
      const toolStart = (count: number) =>
        new Promise<ToolStart>((resolve) => waiting.push({ at: Math.max(count, toolStarts + 1), resolve }));
      const watch = (worker: WorkerProcess): WorkerProcess => {
        worker.subscribe((event) => {
          if (event.type === 'tool-finished') finished.add(String(event.idempotencyKey));
          if (event.type !== 'tool-started') return;
          const key = String(event.idempotencyKey);
          executions.set(key, (executions.get(key) ?? 0) + 1);
          toolStarts += 1;
          for (const waiter of waiting.filter((candidate) => candidate.at <= toolStarts)) {
            waiting.splice(waiting.indexOf(waiter), 1);
            waiter.resolve({ worker, key });
          }
        });
        return worker;
      };
      const startWorker = async () => watch(await cluster.startWorker(model.url));
      await Promise.all([startWorker(), startWorker(), startWorker()]);

      const startedAt = Date.now();
      const runIds = await Promise.all(
        Array.from({ length: RUNS }, (_, index) =>
          cluster.keel.startRun({ task: `cluster-${index}`, heartbeatTimeoutSeconds: 2 }),
        ),
      );
      const results = Promise.all(runIds.map((runId) => cluster.keel.waitForResult(runId)));
      results.catch(() => undefined);

      const log: string[] = [];
      const note = (what: string) => {
        log.push(`${Date.now() - startedAt} ms: ${what}`);
        console.info(`[cluster] ${log.at(-1)} (${toolStarts} tool starts)`);
      };
      const total = RUNS * CALLS_PER_RUN;
      // One disruption at a time, each once the runs have made progress since the last. A worker is
      // killed while it runs a tool call, which another worker must then run again.
      const interrupted: string[] = [];
      const killMidTool = async (count: number, name: string) => {
        const { worker, key } = await toolStart(count);
        await worker.kill();
        interrupted.push(key);
        note(`SIGKILL ${name} (running ${key})`);
      };
      await killMidTool(Math.round(total * 0.1), 'worker 1');
      await startWorker();
      await toolStart(Math.round(total * 0.3));
      await cluster.server.kill();
      note('SIGKILL temporal-server');
      await cluster.server.start();
      note('temporal-server started again');
      await toolStart(Math.round(total * 0.5));
      await cluster.postgres.kill();
      note('SIGKILL PostgreSQL');
      await cluster.postgres.start();
      note('PostgreSQL started again');
      await killMidTool(Math.round(total * 0.7), 'worker 2');
      disrupting = false;

      const ended = await results;
      note('every run ended');
      console.info(`[measure] cluster disruptions: ${log.join('; ')}`);
      expect(
        ended.map((result) => (result.status === 'completed' ? result.finalText : result.status)),
      ).toEqual(Array.from({ length: RUNS }, (_, index) => `done cluster-${index}`));
      // Every call that started also finished (on some worker), and the calls whose workers died ran
      // again elsewhere; each run made its calls in order (its answer says so).
      expect(executions.size).toBeGreaterThanOrEqual(total);
      expect([...executions.keys()].filter((key) => !finished.has(key))).toEqual([]);
      for (const key of interrupted) expect(executions.get(key), key).toBeGreaterThanOrEqual(2);
      const repeated = [...executions.values()].filter((count) => count > 1).length;
      console.info(
        `[measure] cluster: ${RUNS} runs, ${executions.size} tool calls, ${repeated} started more than once, ` +
          `${model.requests.length} model requests`,
      );
      model.assertDone();
    } finally {
      await cluster.killWorkers();
      await model.close();
    }
  });
});
