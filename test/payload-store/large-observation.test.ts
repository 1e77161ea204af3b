import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { z } from 'zod';
import { KeelClient } from '../../src/client.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { openPayloadStore } from '../../src/payload-store/open-payload-store.js';
import type { OpenedPayloadStore } from '../../src/payload-store/open-payload-store.js';
import { connectTestServer, startTestWorker, temporaryWorkspace } from '../support/harness.js';
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

/** A 1 MiB text file, as a tool might read from a repository. */
const FILE_BYTES = 1024 * 1024;
const bigFile = Array.from(
  { length: FILE_BYTES / 64 },
  (_, index) => `line ${String(index).padStart(8, '0')} ${'x'.repeat(49)}\n`,
).join('');
/** What the model may see of it: the executor's preview under the run's limit (the largest a run may set). */
const CHAR_LIMIT = 500_000;
const PREVIEW = bigFile.slice(0, CHAR_LIMIT - 400);

/** The history as the server holds it: raw protobuf, no data converter resolving references. */
async function rawHistory(runId: string): Promise<proto.temporal.api.history.v1.IHistory> {
  const response = await server.client.workflowService.getWorkflowExecutionHistory({
    namespace: inject('temporalNamespace'),
    execution: { workflowId: runId },
  });
  return response.history ?? {};
}

function historyBytes(history: proto.temporal.api.history.v1.IHistory): number {
  return proto.temporal.api.history.v1.History.encode(history).finish().length;
}

/** Payloads of the history that are references to the store. */
function references(history: proto.temporal.api.history.v1.IHistory): number {
  const json = JSON.stringify(
    proto.temporal.api.history.v1.History.toObject(history as never, { bytes: String }),
  );
  const messageType = Buffer.from('temporal.api.sdk.v1.ExternalStorageReference').toString('base64');
  return json.split(messageType).length - 1;
}

async function payloadFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  for (const scope of await readdir(root)) {
    for (const name of await readdir(path.join(root, scope))) {
      if (name.endsWith('.payload')) files.push(path.join(root, scope, name));
    }
  }
  return files;
}

/** One run reading the big file, on a worker with `store` (or none); the run's id and what the model got. */
async function readBigFile(store: OpenedPayloadStore | undefined) {
  const workspace = await temporaryWorkspace();
  directories.push(workspace);
  await writeFile(path.join(workspace, 'big.txt'), bigFile);
  const model = await ScriptedModel.start([
    reply.calls({ name: 'read_file', arguments: { path: 'big.txt' } }),
    reply.text('Read it.'),
  ]);
  try {
    const { worker, taskQueue } = await startTestWorker(server, {
      model,
      workspace,
      ...(store ? { workerOptions: { dataConverter: store.dataConverter } } : {}),
    });
    const keel = new KeelClient(
      new Client({
        connection: server.client.connection,
        namespace: inject('temporalNamespace'),
        ...(store ? { dataConverter: store.dataConverter } : {}),
      }),
      taskQueue,
    );
    const started = performance.now();
    const { runId, result } = await worker.runUntil(async () => {
      const id = await keel.startRun({ task: 'read big.txt', observationCharLimit: CHAR_LIMIT });
      return { runId: id, result: await keel.waitForResult(id) };
    });
    const elapsedMs = performance.now() - started;
    model.assertDone();
    const output = JSON.parse(model.requests[1]!.body.input[0]!.output as string) as Record<string, unknown>;
    return { runId, result, output, elapsedMs, history: await rawHistory(runId) };
  } finally {
    await model.close();
  }
}

describe('large payloads in a store outside history', () => {
  it('keeps a 1 MiB file read out of history: references there, the whole preview at the model', async () => {
    const root = await temporary('keel-blobs-');
    const store = await openPayloadStore({
      location: { kind: 'directory', path: root },
      thresholdBytes: 128 * 1024,
      keepHours: 720,
    });
    const inline = await readBigFile(undefined);
    const stored = await readBigFile(store);

    for (const run of [inline, stored]) {
      expect(run.result).toMatchObject({ status: 'completed', finalText: 'Read it.' });
      // What the run's limit allows, the same with the store as without: the start of the file, whole.
      expect(run.output).toMatchObject({ error: 'output_too_large', preview: PREVIEW });
    }
    const [inlineBytes, storedBytes] = [historyBytes(inline.history), historyBytes(stored.history)];
    // Without the store the preview is in history twice: the tool's result and the next model request.
    expect(inlineBytes).toBeGreaterThan(2 * PREVIEW.length);
    expect(references(inline.history)).toBe(0);
    expect(storedBytes).toBeLessThan(32 * 1024);
    expect(references(stored.history)).toBe(2);
    expect(await payloadFiles(root)).toHaveLength(2);
    console.log(
      `history of a run reading a 1 MiB file (observationCharLimit ${CHAR_LIMIT}): ${inlineBytes} bytes inline, ` +
        `${storedBytes} bytes with the store; run took ${inline.elapsedMs.toFixed(0)} ms inline, ` +
        `${stored.elapsedMs.toFixed(0)} ms with the store`,
    );

    // Replaying needs the store; a changed blob is refused with what happened, and nothing is lost.
    const replay = (dataConverter: OpenedPayloadStore['dataConverter']) =>
      Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter },
        stored.history,
        stored.runId,
      );
    await replay(store.dataConverter);
    // Both blobs are changed: replay reads the tool's result, not the model request's input (the
    // workflow makes that command again), and which file is which depends on their hashes.
    const files = await payloadFiles(root);
    const originals = await Promise.all(files.map((file) => readFile(file)));
    const changed = originals.map((original) => {
      const bytes = Buffer.from(original);
      bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 1;
      return bytes;
    });
    await Promise.all(files.map((file, index) => writeFile(file, changed[index]!)));
    await expect(replay(store.dataConverter)).rejects.toThrow(/was changed after it was written/);
    expect(await Promise.all(files.map((file) => readFile(file)))).toEqual(changed);
    await Promise.all(files.map((file, index) => writeFile(file, originals[index]!)));
    await replay(store.dataConverter);
  });
  it('stores a local tool’s large output too: the marker in history holds a reference', async () => {
    const root = await temporary('keel-blobs-local-');
    const store = await openPayloadStore({
      location: { kind: 'directory', path: root },
      thresholdBytes: 128 * 1024,
      keepHours: 720,
    });
    const text = 'l'.repeat(300_000);
    const localTool = defineTool({
      name: 'big_local',
      description: 'Return a lot of text.',
      schema: z.object({}),
      readOnly: true,
      local: true,
      execute: () => text,
    });
    const model = await ScriptedModel.start([
      reply.calls({ name: 'big_local', arguments: {} }),
      reply.text('Got it.'),
    ]);
    try {
      const { worker, taskQueue } = await startTestWorker(server, {
        model,
        tools: [localTool],
        workerOptions: { dataConverter: store.dataConverter },
      });
      const keel = new KeelClient(
        new Client({
          connection: server.client.connection,
          namespace: inject('temporalNamespace'),
          dataConverter: store.dataConverter,
        }),
        taskQueue,
      );
      const runId = await worker.runUntil(async () => {
        const id = await keel.startRun({ task: 'read', observationCharLimit: 400_000 });
        expect(await keel.waitForResult(id)).toMatchObject({ status: 'completed', finalText: 'Got it.' });
        return id;
      });
      expect(model.requests[1]!.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_1_1', output: text },
      ]);
      const history = await rawHistory(runId);
      const markers = (history.events ?? []).filter(
        (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      );
      expect(markers).toHaveLength(1);
      expect(references({ events: markers })).toBe(1);
      expect(historyBytes(history)).toBeLessThan(32 * 1024);
    } finally {
      await model.close();
    }
  });
});
