import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { openPayloadStore } from '../../src/payload-store/open-payload-store.js';
import type { OpenedPayloadStore } from '../../src/payload-store/open-payload-store.js';
import type { PayloadStoreLocation } from '../../src/payload-store/payload-store-config.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';
import { connectTestServer, startTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';

let server: TestServer;
const directories: string[] = [];
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

async function temporary(prefix: string): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), prefix));
  directories.push(directory);
  return directory;
}

let postgres: Postgres;
beforeAll(async () => {
  postgres = await startPostgres({ password: 'shared:s3cret' });
});
afterAll(async () => {
  await postgres?.close();
});

/** Where the two workers keep payloads: the only thing they share besides Temporal. */
const stores: Array<{ kind: string; location: () => Promise<PayloadStoreLocation> }> = [
  // Stands for shared storage (NFS, a mounted volume).
  {
    kind: 'directory',
    location: async () => ({ kind: 'directory', path: await temporary('keel-blobs-shared-') }),
  },
  { kind: 'PostgreSQL', location: () => Promise.resolve({ kind: 'postgres', url: postgres.url() }) },
];

describe.each(stores)('a payload store in a $kind shared by workers', ({ location }) => {
  it('lets a second worker, with a state directory of its own, retry a step whose input the first one stored', async () => {
    const where = await location();
    const open = (): Promise<OpenedPayloadStore> =>
      openPayloadStore({ location: where, thresholdBytes: 128 * 1024, keepHours: 720 });
    const workspace = await temporary('keel-workspace-');
    const text = 'y'.repeat(300_000);
    await writeFile(path.join(workspace, 'big.txt'), text);

    let firstTry: () => void = () => undefined;
    const firstTryFailed = new Promise<void>((resolve) => (firstTry = resolve));
    const steps: ScriptStep[] = [
      reply.calls({ name: 'read_file', arguments: { path: 'big.txt' } }),
      // The model turn after the read fails once on the first worker: Temporal retries it later.
      { kind: 'error', status: 500, body: { error: { message: 'try again', type: 'server_error' } } },
      reply.text('Read it on the second worker.'),
    ];
    const model = await ScriptedModel.start((request) => {
      if (request.index === 1) firstTry();
      return (
        steps[request.index] ?? { kind: 'error', status: 400, body: { error: { message: 'unscripted' } } }
      );
    });
    try {
      const first = await open();
      const second = await open();
      const a = await startTestWorker(server, {
        model,
        workspace,
        stateDirectory: await temporary('keel-state-a-'),
        workerOptions: { dataConverter: first.dataConverter },
      });
      const keel = new KeelClient(
        new Client({
          connection: server.client.connection,
          namespace: inject('temporalNamespace'),
          dataConverter: first.dataConverter,
        }),
        a.taskQueue,
      );
      const runId = await a.worker.runUntil(async () => {
        const id = await keel.startRun({ task: 'read big.txt', observationCharLimit: 400_000 });
        await firstTryFailed;
        return id;
      });
      // The first worker is gone (its cache and state directory with it); the retry must come from the store.
      const b = await startTestWorker(server, {
        model,
        workspace,
        taskQueue: a.taskQueue,
        stateDirectory: await temporary('keel-state-b-'),
        workerOptions: { dataConverter: second.dataConverter },
      });
      const result = await b.worker.runUntil(keel.waitForResult(runId));
      expect(result).toMatchObject({ status: 'completed', finalText: 'Read it on the second worker.' });
      expect(model.requests).toHaveLength(3);
      for (const request of model.requests.slice(1)) {
        expect(request.body.input).toEqual([
          { type: 'function_call_output', call_id: 'call_1_1', output: text },
        ]);
      }
      await Promise.all([first.close(), second.close()]);
    } finally {
      await model.close();
    }
  });
});
