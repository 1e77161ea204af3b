import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodingFailureConverterPath } from '../../src/data-converter.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { workflowsPath } from '../../src/worker.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';
import { rawPayloads, base64Text } from './raw-history.js';
import { encryptingWorker, keyRing, KEYS } from './support.js';

const docs = path.resolve(import.meta.dirname, '../../docs');

/** The first ```python block after `heading` on a docs page. */
async function pythonBlock(page: string, heading: string): Promise<string> {
  const section = (await readFile(path.join(docs, page), 'utf8')).split(`\n${heading}`)[1] ?? '';
  const code = /```python\n([\s\S]*?)```/u.exec(section)?.[1];
  if (code === undefined) throw new Error(`docs/${page} has no Python block under ${heading}`);
  return code;
}

function replaceAll(code: string, from: string, to: string): string {
  expect(code, `the Python example names ${from}`).toContain(from);
  return code.split(from).join(to);
}

function runPython(code: string, environment: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'python3',
      ['-'],
      { timeout: 120_000, env: environment },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else reject(new Error(`python3 failed: ${error.message}\n${stdout}\n${stderr}`));
      },
    );
    child.stdin!.end(code);
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
  await ensureSearchAttributes(server.client.connection, inject('temporalNamespace'), silentLogger);
});
afterAll(async () => {
  await server?.close();
});

describe("docs/encryption.md's Python codec", () => {
  it("lets docs/contract.md's Python client start an encrypted run and read its result, in Temporal's sample format", async () => {
    const ready = await runPython('import temporalio, cryptography\n', process.env).then(
      () => true,
      () => false,
    );
    if (!ready) {
      throw new Error(
        'This test runs Python with temporalio and cryptography: python3 -m pip install temporalio==1.35.0 cryptography',
      );
    }
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-python-codec-'));
    const keysFile = path.join(directory, 'keys');
    await writeFile(keysFile, `# Keel's keys\nk1:${KEYS.k1}\n`, { mode: 0o600 });
    const model = await ScriptedModel.start(
      Array.from({ length: 10 }, (_, index) =>
        reply.calls({ name: 'echo', arguments: { text: String(index) } }),
      ),
    );
    const taskQueue = `codec-python-${randomUUID()}`;
    const bundle = await bundleWorkflowCode({
      workflowsPath,
      failureConverterPath: encodingFailureConverterPath,
      logger: silentLogger,
    });
    const worker = await encryptingWorker(server, {
      keys: await keyRing('k1'),
      model,
      taskQueue,
      workspace: await temporaryWorkspace(),
      tools: [echoTool],
      workflowBundle: bundle,
    });
    const workflowId = `python-codec-${randomUUID()}`;
    let client = await pythonBlock('contract.md', '### Python');
    client = replaceAll(
      client,
      'Client.connect("localhost:7233", namespace="default")',
      `Client.connect(${JSON.stringify(inject('temporalAddress'))}, namespace=${JSON.stringify(inject('temporalNamespace'))}, data_converter=data_converter)`,
    );
    client = replaceAll(client, 'task_queue="keel"', `task_queue=${JSON.stringify(taskQueue)}`);
    client = replaceAll(client, '"ticket-4711"', JSON.stringify(workflowId));
    const code = `${await pythonBlock('encryption.md', '### Python')}\n${client}\nimport os, sys\nsys.stdout.flush()\nos._exit(0)\n`;
    try {
      const stdout = await worker.runUntil(
        runPython(code, {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          KEEL_CODEC_KEYS_FILE: keysFile,
        }),
      );
      // Python read the state and the stopped run's result from encrypted payloads and an encrypted failure.
      expect(stdout.trim().split('\n').at(-1)).toBe('KeelError.MaxTurnsExceeded max_turns');
      // Python's encrypted input reached the model, decrypted by the worker.
      expect(model.requests[0]?.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Read notes.txt and propose a reply to ticket 4711.' },
      ]);
      expect(await historyText(server.client, workflowId)).not.toContain('propose a reply');
      const { payloads } = await rawPayloads(server.client, workflowId);
      const started = payloads.find(({ at }) => at.includes('workflowExecutionStartedEventAttributes.input'));
      expect(base64Text(started?.payload.metadata?.encoding)).toBe('binary/encrypted');
      expect(base64Text(started?.payload.metadata?.['encryption-key-id'])).toBe('k1');
    } finally {
      await model.close();
    }
  }, 180_000);
});
