/**
 * At-most-once side effects across machines: two worker processes with separate state directories
 * (so no shared file store) on the real Temporal server on PostgreSQL. With the idempotency store on
 * PostgreSQL, a worker SIGKILLed between claiming a side effect and recording its result does not
 * let the worker that retries the call repeat it; with the default file store it would.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { release } from '../support/process/control.js';
import { expectToldOutcomeInDoubt, ledgerLines } from '../support/process/ledger.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Cluster } from './support/cluster.js';

const DATABASE = 'keel_side_effects';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await Cluster.start();
  const client = new pg.Client({ connectionString: cluster.postgres.url('postgres') });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
});
afterAll(async () => {
  await cluster?.close();
});

describe('a side effect behind context.once, on workers on two machines', () => {
  it.each([
    {
      store: 'PostgreSQL',
      environment: () => ({ KEEL_IDEMPOTENCY_STORE: cluster.postgres.url(DATABASE) }),
      effects: 1,
    },
    { store: 'a file store per machine', environment: () => ({}), effects: 2 },
  ])(
    'with $store: a worker killed inside the effect leaves $effects effect(s) after the retry elsewhere',
    async ({ environment, effects }) => {
      const model = await ScriptedModel.start([
        reply.calls({ name: 'charge', arguments: { label: 'order-9', pause: 'inside' } }),
        reply.text('I will check the charge before trying again.'),
      ]);
      try {
        const first = await cluster.startWorker(model.url, { environment: environment() });
        const runId = await cluster.keel.startRun({ task: 'charge order 9', heartbeatTimeoutSeconds: 2 });
        await first.waitFor((event) => event.type === 'effect-done');
        await first.kill();
        const second = await cluster.startWorker(model.url, { environment: environment() });
        if (effects === 2) {
          // The second machine cannot see the first one's claim: it runs the effect again, and waits.
          await second.waitFor((event) => event.type === 'effect-done');
          await release(second.options.workspace, 'order-9');
        }

        expect(await cluster.keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
        expect(await ledgerLines(first.options.workspace, second.options.workspace)).toHaveLength(effects);
        if (effects === 1) expectToldOutcomeInDoubt(model);
        else expect(String(model.requests[1]?.body.input[0]?.output)).toContain('receipt-order-9');
      } finally {
        await cluster.killWorkers();
        await model.close();
      }
    },
  );
});
