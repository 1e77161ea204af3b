import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { payloadStoreFromEnvironment, workerConfigFromEnvironment } from '../../src/config.js';
import { openPayloadStore, ownerKnownIn } from '../../src/payload-store/open-payload-store.js';
import { runWorker } from '../../src/worker.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

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

const silent = {
  log: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

describe('a worker configured with KEEL_PAYLOAD_STORE', () => {
  it('stores large payloads there, and a client with the same setting reads the run; Temporal knows the run the blobs belong to', async () => {
    const [workspace, state, root] = await Promise.all([
      temporary('keel-workspace-'),
      temporary('keel-state-'),
      temporary('keel-blobs-'),
    ]);
    const text = 'z'.repeat(300_000);
    await writeFile(path.join(workspace, 'big.txt'), text);
    const model = await ScriptedModel.start([
      reply.calls({ name: 'read_file', arguments: { path: 'big.txt' } }),
      reply.text('Read it.'),
    ]);
    const environment = {
      OPENAI_BASE_URL: model.url,
      // The scripted model keeps conversations as the OpenAI API does; the test reads the chained input.
      KEEL_CONVERSATION: 'chained',
      KEEL_WORKSPACE: workspace,
      KEEL_STATE_DIR: state,
      KEEL_TASK_QUEUE: `keel-test-${randomUUID()}`,
      KEEL_PAYLOAD_STORE: pathToFileURL(root).href,
    };
    try {
      let ready: (worker: Worker) => void = () => undefined;
      const started = new Promise<Worker>((resolve) => (ready = resolve));
      const running = runWorker(workerConfigFromEnvironment(environment), {
        target: {
          connectionOptions: { address: inject('temporalAddress') },
          namespace: inject('temporalNamespace'),
        },
        workflowBundle: { codePath: inject('workflowBundlePath') },
        onReady: ready,
        console: silent,
      });
      const worker = await Promise.race([
        started,
        running.then(() => Promise.reject(new Error('the worker stopped'))),
      ]);
      try {
        const { dataConverter } = await openPayloadStore(payloadStoreFromEnvironment(environment));
        const keel = new KeelClient(
          new Client({
            connection: server.client.connection,
            namespace: inject('temporalNamespace'),
            dataConverter,
          }),
          environment.KEEL_TASK_QUEUE,
        );
        const runId = await keel.startRun({ task: 'read big.txt', observationCharLimit: 400_000 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'Read it.' });
        expect(model.requests[1]!.body.input).toEqual([
          { type: 'function_call_output', call_id: 'call_1_1', output: text },
        ]);
        const [scope] = await readdir(root);
        expect((await readdir(path.join(root, scope!))).sort()).toEqual([
          expect.stringMatching(/^[0-9a-f]{64}\.payload$/),
          expect.stringMatching(/^[0-9a-f]{64}\.payload$/),
          'owner.json',
        ]);
        const known = ownerKnownIn(server.client.connection, inject('temporalNamespace'));
        expect(await known({ namespace: inject('temporalNamespace'), workflowId: runId })).toBe(true);
        expect(
          await known({ namespace: inject('temporalNamespace'), workflowId: `never-${randomUUID()}` }),
        ).toBe(false);
      } finally {
        worker.shutdown();
        await running;
      }
    } finally {
      await model.close();
    }
  });
});
