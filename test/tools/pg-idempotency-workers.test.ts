import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyJson } from '../support/history.js';
import { useProcessFixtures } from '../support/process/fixture.js';
import { expectToldOutcomeInDoubt, ledgerLines } from '../support/process/ledger.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';
import { reply } from '../support/scripted-model.js';

// How long Temporal waits before it gives a dead worker's task away.
const HEARTBEAT_SECONDS = 2;
const PASSWORD = 'pg-Secret-4711';

const { setUp } = useProcessFixtures();
let server: Postgres;
const stateDirectories: string[] = [];

beforeAll(async () => {
  server = await startPostgres({ password: PASSWORD });
});
afterAll(async () => {
  await server.close();
  await Promise.all(stateDirectories.map((directory) => rm(directory, { recursive: true, force: true })));
});

async function ownStateDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-state-'));
  stateDirectories.push(directory);
  return directory;
}

describe('workers on two machines sharing a PostgreSQL side-effect store', () => {
  it('do not repeat an effect when the worker doing it dies; the model is told the outcome is in doubt', async () => {
    const { model, fixture } = await setUp([
      reply.calls({ name: 'charge', arguments: { label: 'order-9', pause: 'inside' } }),
      reply.text('I will check the charge first.'),
    ]);
    // Each worker has a state directory of its own, as on its own machine: only the database is shared.
    const environment = { KEEL_IDEMPOTENCY_STORE: server.url() };
    const first = await fixture.startWorker({ stateDirectory: await ownStateDirectory(), environment });
    const runId = await fixture.keel.startRun({
      task: 'charge order 9',
      heartbeatTimeoutSeconds: HEARTBEAT_SECONDS,
    });
    await first.waitFor((event) => event.type === 'effect-done');
    await first.kill();
    const second = await fixture.startWorker({ stateDirectory: await ownStateDirectory(), environment });

    // With a store the second worker cannot see, it would charge again (and wait inside the effect).
    const repeated = second
      .waitFor((event) => event.type === 'effect-done')
      .then(() => Promise.reject(new Error('the second worker charged again')));
    expect(await Promise.race([fixture.keel.waitForResult(runId), repeated])).toMatchObject({
      status: 'completed',
    });
    expect(await ledgerLines(fixture.workspace)).toHaveLength(1);
    expectToldOutcomeInDoubt(model);
    // The retry ran on the second worker, which found the first one's claim in the database.
    expect(second.events.some((event) => event.type === 'tool-started')).toBe(true);

    expect(await historyJson(fixture.keel.temporal, runId)).not.toContain(PASSWORD);
    expect([...first.output, ...second.output].join('\n')).not.toContain(PASSWORD);
  });
});
