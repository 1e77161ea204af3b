import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { encodingFailureConverterPath } from '../../src/data-converter.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { workflowsPath } from '../../src/worker.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { base64Text, rawPayloads } from './raw-history.js';
import { encryptingClient, encryptingWorker, keyRing } from './support.js';

/** In the task, the tool's arguments, its output and the answer: nowhere in what the server stores. */
const CANARY = 'canary-5d1e9b';

let server: TestServer;
let bundle: { code: string };
beforeAll(async () => {
  server = await connectTestServer();
  await ensureSearchAttributes(server.client.connection, inject('temporalNamespace'), silentLogger);
  bundle = await bundleWorkflowCode({
    workflowsPath,
    failureConverterPath: encodingFailureConverterPath,
    logger: silentLogger,
  });
});
afterAll(async () => {
  await server?.close();
});

/** Reads the file named with the canary, then answers with it. */
const script = () => [
  reply.calls({
    name: 'read_file',
    arguments: { path: `notes-${CANARY}.txt`, startLine: null, endLine: null },
  }),
  reply.text(`The notes say ${CANARY}-answer.`),
];

async function workspaceWithNotes(): Promise<string> {
  const workspace = await temporaryWorkspace();
  await writeFile(path.join(workspace, `notes-${CANARY}.txt`), `observed ${CANARY}-observation\n`);
  return workspace;
}

describe('a run with payload encryption', () => {
  it('keeps task, tool arguments, observations, summaries and the answer out of history, and KeelClient reads them', async () => {
    const keys = await keyRing('k1');
    const model = await ScriptedModel.start(script());
    const taskQueue = `codec-${randomUUID()}`;
    // No bundle given: the worker bundles its workflows with the encrypting failure converter itself.
    const worker = await encryptingWorker(server, {
      keys,
      model,
      taskQueue,
      workspace: await workspaceWithNotes(),
    });
    const keel = encryptingClient(server, keys, taskQueue);
    try {
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: `Read the notes of ${CANARY}-task\nand answer.` });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'completed', finalText: `The notes say ${CANARY}-answer.` });
        const state = await keel.getRunState(runId);
        expect(JSON.stringify(state.events)).toContain(`notes-${CANARY}.txt`);
        // The model saw the observation: it was decrypted for the activity and encrypted again after.
        expect(JSON.stringify(model.requests[1]?.body.input)).toContain(`${CANARY}-observation`);

        // What the server stores, read without the codec.
        const { json, payloads } = await rawPayloads(server.client, runId);
        expect(await historyText(server.client, runId)).not.toContain(CANARY);
        expect(json).not.toContain(CANARY);
        const plain = payloads.filter(({ at, payload }) => {
          if (/\.searchAttributes\.indexedFields\./u.test(at)) return false;
          // The SDK writes patch markers itself, past the codec: they hold a patch's id, nothing of the run.
          if (at.includes('markerRecordedEventAttributes.details.patch-data')) {
            expect(base64Text(payload.data)).toMatch(/^\{"id":"keel-[a-z-]+","deprecated":false\}$/u);
            return false;
          }
          // The tracing interceptors' header, also written past the codec: a W3C trace context, nothing of the run.
          if (at.endsWith('.header.fields._tracer-data')) {
            expect(base64Text(payload.data)).toMatch(
              /^\{"traceparent":"00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]"\}$/u,
            );
            return false;
          }
          return base64Text(payload.metadata?.encoding) !== 'binary/encrypted';
        });
        expect(plain).toEqual([]);
        // Inputs, results, the activities' summaries and the run's static summary are all among them.
        expect(payloads.length).toBeGreaterThan(10);
        expect(payloads.some(({ at }) => at.includes('userMetadata.summary'))).toBe(true);
        expect(
          payloads.every(({ payload }) => base64Text(payload.metadata?.['encryption-key-id']) !== 'k2'),
        ).toBe(true);

        // Search attributes stay plain for filtering and carry no prompt text: status, model, counts.
        const attributes = payloads.filter(({ at }) => at.includes('.searchAttributes.indexedFields.'));
        const names = new Set(attributes.map(({ at }) => /indexedFields\.(\w+)/u.exec(at)![1]));
        // (TemporalChangeVersion is the SDK's: the ids of the patches the run went through.)
        expect([...names].sort()).toEqual([
          'KeelModel',
          'KeelStatus',
          'KeelTokens',
          'KeelTurns',
          'TemporalChangeVersion',
        ]);

        // The current details (the UI's live view, a query answered by the worker) are encrypted too.
        const metadata = await server.client.workflowService.queryWorkflow({
          namespace: inject('temporalNamespace'),
          execution: { workflowId: runId },
          query: { queryType: '__temporal_workflow_metadata' },
        });
        const answer = metadata.queryResult?.payloads?.[0];
        expect(Buffer.from(answer?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
        expect(Buffer.from(answer?.data ?? []).toString('latin1')).not.toContain(CANARY);
        const [decoded] = await new EncryptionCodec(keys).decode([answer!]);
        expect(JSON.stringify(defaultPayloadConverter.fromPayload(decoded!))).toContain(`${CANARY}-task`);
      });
    } finally {
      await model.close();
    }
  }, 120_000);

  it("encrypts a failure's message too, and KeelClient still reads the stopped run's result", async () => {
    const keys = await keyRing('k1');
    const model = await ScriptedModel.start(script().slice(0, 1));
    const taskQueue = `codec-${randomUUID()}`;
    const worker = await encryptingWorker(server, {
      keys,
      model,
      taskQueue,
      workspace: await workspaceWithNotes(),
      workflowBundle: bundle,
    });
    const keel = encryptingClient(server, keys, taskQueue);
    try {
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: `Read the notes of ${CANARY}`, maxTurns: 1 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'max_turns', turns: 1 });
        const { json } = await rawPayloads(server.client, runId);
        const failure = (
          JSON.parse(json) as { events: Array<Record<string, { failure?: { message: string } }>> }
        ).events
          .map((event) => event.workflowExecutionFailedEventAttributes?.failure)
          .find((found) => found !== undefined);
        expect(failure?.message).toBe('Encoded failure');
        expect(await historyText(server.client, runId)).not.toContain(CANARY);
      });
    } finally {
      await model.close();
    }
  }, 120_000);

  it('leaves a run encrypted with a key the worker lacks waiting, not failed, until a worker has the key', async () => {
    const model = await ScriptedModel.start(script());
    const taskQueue = `codec-${randomUUID()}`;
    const workspace = await workspaceWithNotes();
    const keel = encryptingClient(server, await keyRing('k2'), taskQueue);
    const runId = await keel.startRun({ task: `Read the notes of ${CANARY}` });
    const lacking = await encryptingWorker(server, {
      keys: await keyRing('k1'),
      model,
      taskQueue,
      workspace,
      workflowBundle: bundle,
    });
    try {
      const failed = await lacking.runUntil(async () => {
        // The workflow task fails, and Temporal retries it: the run itself goes on.
        for (;;) {
          const history = await server.client.workflow.getHandle(runId).fetchHistory();
          const event = history.events?.find((found) => found.workflowTaskFailedEventAttributes);
          if (event) return event.workflowTaskFailedEventAttributes!.failure!;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
      expect((await server.client.workflow.getHandle(runId).describe()).status.name).toBe('RUNNING');
      expect(model.requests).toEqual([]);
      // The failure is encrypted too; decrypted, it names the key id and the setting to fix.
      const [attributes] = await new EncryptionCodec(await keyRing('k1')).decode([failed.encodedAttributes!]);
      const { message } = defaultPayloadConverter.fromPayload<{ message: string }>(attributes!);
      expect(message).toMatch(
        /key id "k2", which KEEL_CODEC_KEYS_FILE \(.*\) does not list \(it lists k1\)/u,
      );

      // The fix: the worker is given the new key (first, so it encrypts with it; k1 still decrypts).
      const holding = await encryptingWorker(server, {
        keys: await keyRing('k2', 'k1'),
        model,
        taskQueue,
        workspace,
        workflowBundle: bundle,
      });
      const result = await holding.runUntil(keel.waitForResult(runId));
      expect(result).toMatchObject({ status: 'completed', finalText: `The notes say ${CANARY}-answer.` });
    } finally {
      await model.close();
    }
  }, 120_000);
});
