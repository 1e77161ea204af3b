import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { dataConverterFor, encodingFailureConverterPath } from '../../src/data-converter.js';
import { openPayloadStore } from '../../src/payload-store/open-payload-store.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { createKeelWorker, workflowsPath } from '../../src/worker.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { keyRing } from './support.js';

const CANARY = 'canary-st0r3d';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
  await ensureSearchAttributes(server.client.connection, inject('temporalNamespace'), silentLogger);
});
afterAll(async () => {
  await server?.close();
});

/** Every file the directory store wrote, with its bytes. */
async function storedFiles(root: string): Promise<Array<{ name: string; bytes: Buffer }>> {
  const files: Array<{ name: string; bytes: Buffer }> = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files.push({ name: entry.name, bytes: await readFile(path.join(entry.parentPath, entry.name)) });
  }
  return files;
}

describe('encryption with the large-payload store', () => {
  it('stores large payloads encrypted: neither history nor the store holds the text', async () => {
    const keys = await keyRing('k1');
    const root = await mkdtemp(path.join(tmpdir(), 'keel-encrypted-blobs-'));
    const store = await openPayloadStore({
      location: { kind: 'directory', path: root },
      thresholdBytes: 128 * 1024,
      keepHours: 720,
    });
    const dataConverter = dataConverterFor(keys, store.dataConverter);
    const workspace = await temporaryWorkspace();
    const line = `${CANARY} ${'x'.repeat(60)}\n`;
    await writeFile(path.join(workspace, 'big.txt'), line.repeat(Math.ceil(300_000 / line.length)));
    const model = await ScriptedModel.start([
      reply.calls({ name: 'read_file', arguments: { path: 'big.txt', startLine: null, endLine: null } }),
      reply.text(`Read it: ${CANARY}.`),
    ]);
    const taskQueue = `codec-store-${randomUUID()}`;
    const worker = await createKeelWorker({
      connection: server.connection,
      namespace: inject('temporalNamespace'),
      taskQueue,
      workspace,
      stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
      openai: createOpenAIClient({ apiKey: 'sk-test-codec', baseURL: model.url }),
      defaultModel: 'scripted-model',
      modelMode: 'foreground',
      tools: fileTools,
      searchAttributes: true,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath,
        failureConverterPath: encodingFailureConverterPath,
        logger: silentLogger,
      }),
      workerOptions: { dataConverter },
    });
    const keel = new KeelClient(
      new Client({
        connection: server.client.connection,
        namespace: inject('temporalNamespace'),
        dataConverter,
      }),
      taskQueue,
    );
    try {
      const runId = await worker.runUntil(async () => {
        const id = await keel.startRun({ task: `Read big.txt for ${CANARY}`, observationCharLimit: 500_000 });
        expect(await keel.waitForResult(id)).toMatchObject({
          status: 'completed',
          finalText: `Read it: ${CANARY}.`,
        });
        return id;
      });
      const files = await storedFiles(root);
      // The blobs themselves are payloads the codec encrypted; beside them, what run they belong to.
      expect(files.filter(({ name }) => name.endsWith('.payload')).length).toBeGreaterThan(0);
      for (const { name, bytes } of files) {
        expect(bytes.toString('latin1'), name).not.toContain(CANARY);
        if (name.endsWith('.payload')) expect(bytes.toString('latin1'), name).toContain('binary/encrypted');
      }
      expect(await historyText(server.client, runId)).not.toContain(CANARY);
    } finally {
      await model.close();
      await store.close();
    }
  }, 120_000);
});
