import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { codecKeysFromEnvironment } from '../../src/codec/codec-config.js';
import type { KeyRing } from '../../src/codec/key-ring.js';
import { dataConverterFor } from '../../src/data-converter.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { createKeelWorker } from '../../src/worker.js';
import type { TestServer } from '../support/harness.js';
import type { ScriptedModel } from '../support/scripted-model.js';

/** Two keys, as `openssl rand -base64 32` prints them. */
export const KEYS = {
  k1: Buffer.alloc(32, 0x11).toString('base64'),
  k2: Buffer.alloc(32, 0x22).toString('base64'),
};

/** A keys file listing `ids` (the first encrypts), read the way every Keel process reads it. */
export async function keyRing(...ids: Array<keyof typeof KEYS>): Promise<KeyRing> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'keel-keys-')), 'keys');
  await writeFile(file, ids.map((id) => `${id}:${KEYS[id]}\n`).join(''), { mode: 0o600 });
  return codecKeysFromEnvironment({ KEEL_CODEC_KEYS_FILE: file })!;
}

/** A KeelClient on the test server that encrypts and decrypts with `keys`. */
export function encryptingClient(server: TestServer, keys: KeyRing, taskQueue: string): KeelClient {
  const client = new Client({
    connection: server.client.connection,
    namespace: inject('temporalNamespace'),
    dataConverter: dataConverterFor(keys),
  });
  return new KeelClient(client, taskQueue);
}

/**
 * A Keel worker encrypting with `keys`, its workflow code bundled here with the failure converter
 * that encrypts failures (as `keel worker` does when a key is set).
 */
export async function encryptingWorker(
  server: TestServer,
  options: {
    keys: KeyRing;
    model: ScriptedModel;
    taskQueue: string;
    workspace: string;
    tools?: readonly Tool[];
    /** Bundled with `encodingFailureConverterPath`; when absent the worker bundles its own. */
    workflowBundle?: { code: string };
  },
): Promise<Worker> {
  return createKeelWorker({
    connection: server.connection,
    namespace: inject('temporalNamespace'),
    taskQueue: options.taskQueue,
    workspace: options.workspace,
    stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
    openai: createOpenAIClient({ apiKey: 'sk-test-codec', baseURL: options.model.url }),
    defaultModel: 'scripted-model',
    modelMode: 'foreground',
    tools: options.tools ?? fileTools,
    searchAttributes: true,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    workerOptions: { dataConverter: dataConverterFor(options.keys) },
  });
}
