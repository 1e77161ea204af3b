import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { freePort } from '../support/free-port.js';
import { deferred } from '../support/deferred.js';
import type { Deferred } from '../support/deferred.js';
import { connectTestServer, startTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';
import { waitUntilModelTurnsStarted } from '../support/model-turns-started.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

// A connection each, as two machines would have: one connection serves one worker per task queue.
let servers: TestServer[] = [];
let postgres: Postgres;
beforeAll(async () => {
  [postgres, ...servers] = await Promise.all([startPostgres(), connectTestServer(), connectTestServer()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([...servers.map((server) => server.close()), postgres?.close()]);
});

describe('model call pacing shared through PostgreSQL', () => {
  it('holds two workers of a queue to one model call in flight between them, and all runs complete', async () => {
    const holds: Array<Deferred<void>> = [];
    const model = await ScriptedModel.start((request) => {
      const hold = deferred();
      holds[request.index] = hold;
      return reply.held(reply.text(`answer ${request.index}`), hold.promise);
    });
    const taskQueue = `keel-test-${randomUUID()}`;
    const modelPacing = { maxConcurrent: 1, store: postgres.url(), pool: taskQueue };
    // One activity at a time per worker: the two runs' model turns land on different workers, so a
    // per-worker limit of 1 would let both through.
    const options = {
      model,
      modelMode: 'foreground' as const,
      taskQueue,
      modelPacing,
      workerOptions: { maxConcurrentActivityTaskExecutions: 1 },
    };
    try {
      const [first, second] = [
        await startTestWorker(servers[0]!, options),
        await startTestWorker(servers[1]!, options),
      ];
      const keel = first.keel;
      await first.worker.runUntil(
        second.worker.runUntil(async () => {
          const runIds = await Promise.all([1, 2].map((n) => keel.startRun({ task: `run ${n}` })));
          // Both model turns run, one on each worker, and have heartbeated; only one reached the model.
          await model.waitForRequests(1);
          await waitUntilModelTurnsStarted(runIds, keel.temporal);
          expect(model.requests).toHaveLength(1);
          holds[0]!.resolve();
          await model.waitForRequests(2);
          holds[1]!.resolve();
          const results = await Promise.all(runIds.map((runId) => keel.waitForResult(runId)));
          expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);
        }),
      );
      const database = new pg.Client({ connectionString: postgres.url() });
      await database.connect();
      try {
        const leases = await database.query('SELECT 1 FROM keel_model_pacing_leases WHERE pool = $1', [
          taskQueue,
        ]);
        expect(leases.rowCount).toBe(0);
      } finally {
        await database.end();
      }
    } finally {
      for (const hold of holds) hold?.resolve();
      await model.close();
    }
  });

  it('does not start a worker whose pacing store cannot be reached, naming the setting and not the password', async () => {
    const model = await ScriptedModel.start(() => reply.text('unused'));
    try {
      const store = `postgres://keel:do-not-show-me@127.0.0.1:${await freePort()}/keel`;
      const refused = await startTestWorker(servers[0]!, {
        model,
        modelPacing: { maxConcurrent: 1, store, pool: 'unreachable' },
      }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(refused).toBeInstanceOf(ConfigError);
      expect(refused?.message).toContain('KEEL_MODEL_PACING_STORE');
      expect(refused?.message).not.toContain('do-not-show-me');
    } finally {
      await model.close();
    }
  });
});
