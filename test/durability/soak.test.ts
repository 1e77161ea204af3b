/**
 * Many concurrent runs while worker processes are killed at random, in both model modes. Sized by
 * KEEL_SOAK_RUNS (20) and KEEL_SOAK_KILLS (3); KEEL_SOAK_SEED replays a kill schedule. `npm run soak`
 * runs a larger one. Each mode prints the model creates it paid per logical turn.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import type { WorkerProcess } from '../support/process/control.js';
import type { ProcessEvent } from '../support/process/events.js';
import { processFixture } from '../support/process/fixture.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';

const RUNS = Number(process.env.KEEL_SOAK_RUNS ?? 20);
const KILLS = Number(process.env.KEEL_SOAK_KILLS ?? 3);
const SEED = Number(process.env.KEEL_SOAK_SEED ?? Date.now() % 1_000_000);
const CALLS_PER_RUN = 2;
const MODES = (process.env.KEEL_SOAK_MODES ?? 'background,foreground').split(',') as Array<
  'background' | 'foreground'
>;

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A small deterministic PRNG (mulberry32), so a failing kill schedule can be replayed by its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The model server takes up to this long to accept each create, longer than the runs' 2 s heartbeat
 * timeout at times: kills then often land while creates are pending, when no response id is known.
 */
const MAX_ACCEPT_MS = 3_000;
/** Every run waits out three accepts, and kills add retries: the default test timeout is too short. */
const SOAK_TIMEOUT_MS = 120_000 + RUNS * 2_000;

/** The policy, answered after a random accept latency (drawn from `next`), as a loaded server would. */
function slowToAccept(next: () => number): (request: RecordedRequest) => ScriptStep {
  return (request) => reply.slowToAccept(policy(request), delay(Math.floor(next() * MAX_ACCEPT_MS)));
}

/** Each run: `work` twice, then answer. The model reads which run and step it is from the request. */
function policy(request: RecordedRequest): ScriptStep {
  const work = (label: string) => reply.calls({ name: 'work', arguments: { label, milliseconds: 300 } });
  const [item] = request.body.input;
  if (request.body.previous_response_id === undefined) return work(`${String(item?.content)}/1`);
  const match = /^worked:(.+)\/(\d+)$/.exec(String(item?.output));
  if (match === null) return reply.text(`unexpected input ${JSON.stringify(item)}`);
  const step = Number(match[2]);
  return step < CALLS_PER_RUN ? work(`${match[1]}/${step + 1}`) : reply.text(`done ${match[1]}`);
}

describe.each(MODES)(`soak: ${RUNS} concurrent runs, ${KILLS} worker kills, %s mode`, (modelMode) => {
  it(
    'completes every run with its expected answer',
    async () => {
      const model = await ScriptedModel.start(slowToAccept(random(SEED + 1)));
      const fixture = await processFixture(server, model);
      const startWorker = () => fixture.startWorker({ modelMode });
      const next = random(SEED);
      const totalCalls = RUNS * CALLS_PER_RUN;
      const killAt = new Set<number>();
      while (killAt.size < Math.min(KILLS, totalCalls - 1))
        killAt.add(1 + Math.floor(next() * (totalCalls - 1)));
      const executions = new Map<string, number>();
      let toolStarts = 0;
      let kills = 0;
      const replacements: Promise<unknown>[] = [];
      const watch = (worker: WorkerProcess): void =>
        worker.subscribe((event: ProcessEvent) => {
          if (event.type !== 'tool-started') return;
          const key = String(event.idempotencyKey);
          executions.set(key, (executions.get(key) ?? 0) + 1);
          toolStarts += 1;
          if (killAt.has(toolStarts)) {
            kills += 1;
            const killedAndReplaced = Promise.all([
              worker.kill(),
              startWorker().then((replacement) => watch(replacement)),
            ]);
            // Awaited with the others after the runs; handled now so that a failure meanwhile is not unhandled.
            killedAndReplaced.catch(() => undefined);
            replacements.push(killedAndReplaced);
          }
        });
      try {
        for (const worker of await Promise.all([startWorker(), startWorker()])) watch(worker);
        const startedAt = Date.now();
        const runIds = await Promise.all(
          Array.from({ length: RUNS }, (_, index) =>
            fixture.keel.startRun(
              { task: `soak-${index}`, heartbeatTimeoutSeconds: 2 },
              { runId: `soak-${modelMode}-${SEED}-${index}` },
            ),
          ),
        );
        const results = await Promise.all(runIds.map((runId) => fixture.keel.waitForResult(runId)));
        await Promise.all(replacements);

        const histogram: Record<number, number> = {};
        for (const count of executions.values()) histogram[count] = (histogram[count] ?? 0) + 1;
        const turns = RUNS * (CALLS_PER_RUN + 1);
        console.info(
          `[measure] soak ${modelMode} seed ${SEED}: ${RUNS} runs, ${kills} kills, ${Date.now() - startedAt} ms; ` +
            `tool calls by times executed ${JSON.stringify(histogram)}; ` +
            `model creates ${model.requests.length} for ${turns} turns ` +
            `(${(model.requests.length / turns).toFixed(2)} per turn), cancels ${model.cancellations.length}`,
        );
        expect(
          results.map((result) => (result.status === 'completed' ? result.finalText : result.status)),
        ).toEqual(Array.from({ length: RUNS }, (_, index) => `done soak-${index}`));
        expect(executions.size).toBe(totalCalls);
        // Without kills a slow accept alone must not cost second creates (it cost 1.69 per turn before
        // model turns heartbeated during the create); the bound leaves room for a loaded machine.
        if (kills === 0) expect(model.requests.length).toBeLessThanOrEqual(turns * 1.25);
        expect(kills).toBe(killAt.size);
        model.assertDone();
      } finally {
        await fixture.cleanUp();
        await model.close();
      }
    },
    SOAK_TIMEOUT_MS,
  );
});
