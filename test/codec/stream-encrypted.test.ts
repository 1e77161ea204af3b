import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { LiveLine, STREAM_NAMES, StreamRead } from '../../src/contract/stream-event.js';
import type { StreamItem } from '../../src/contract/stream-event.js';
import { encodingFailureConverterPath } from '../../src/data-converter.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { lookAtRun } from '../../src/stream/live-reader.js';
import { workflowsPath } from '../../src/worker.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { shownText } from '../stream/shown-text.js';
import { base64Text, rawPayloads } from './raw-history.js';
import { encryptingClient, encryptingWorker, keyRing } from './support.js';

/** Only in the model's streamed answer: the task does not hold it. */
const CANARY = 'canary-3b8e71';
const ANSWER = `First ${CANARY}-one words, then ${CANARY}-two after the pause.`;

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

describe('a streamed run with payload encryption', () => {
  it('streams the text to KeelClient decoded, while the live lines, the heartbeat that finds them and the stream query are ciphertext', async () => {
    const keys = await keyRing('k1');
    const resume = deferred();
    // A pause mid-answer: the live stream is read raw while the turn is still being written.
    const model = await ScriptedModel.start([
      reply.streamed(reply.text(ANSWER), { pauseAfter: 3, resume: resume.promise }),
    ]);
    const taskQueue = `codec-stream-${randomUUID()}`;
    const worker = await encryptingWorker(server, {
      keys,
      model,
      taskQueue,
      workspace: await temporaryWorkspace(),
      workflowBundle: bundle,
    });
    const keel = encryptingClient(server, keys, taskQueue);
    try {
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: 'Answer in two parts.' });
        const items: StreamItem[] = [];
        const sawText = deferred();
        const following = (async () => {
          for await (const item of keel.stream(runId)) {
            items.push(item);
            if (item.event.type === 'text') sawText.resolve();
          }
        })();
        await Promise.race([sawText.promise, following]);
        // The attempt's heartbeat, where a reader finds the live stream, is encrypted on the server.
        const description = await server.client.workflow.getHandle(runId).describe();
        const [details] = description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads ?? [];
        expect(Buffer.from(details?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
        // The live lines are payloads encrypted with the worker's codec: no text in the clear.
        const { live } = await lookAtRun(keel.temporal, runId, 1);
        const response = await fetch(live!.url);
        let first = '';
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          first += new TextDecoder().decode(chunk);
          if (first.includes('\n')) break;
        }
        const line = LiveLine.parse(JSON.parse(first.split('\n')[0]!));
        expect(line).toHaveProperty('payload');
        expect(first).not.toContain(CANARY);
        expect(first).not.toContain('First');
        resume.resolve();
        await following;
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: ANSWER });
        expect(shownText(items)).toEqual([ANSWER]);

        // What the server stores, read without the codec: no stream signal, and everything encrypted.
        const { json, payloads } = await rawPayloads(server.client, runId);
        expect(await historyText(server.client, runId)).not.toContain(CANARY);
        expect(json).not.toContain(CANARY);
        expect(json).not.toContain(STREAM_NAMES.publish);
        const plain = payloads.filter(({ at, payload }) => {
          if (/\.searchAttributes\.indexedFields\./u.test(at)) return false;
          // The SDK writes patch markers itself, past the codec: they hold a patch's id, nothing of the run.
          if (at.includes('markerRecordedEventAttributes.details.patch-data')) return false;
          // So is the tracing interceptors' header (a trace context; encrypted-run.test.ts checks its shape).
          if (at.endsWith('.header.fields._tracer-data')) return false;
          return base64Text(payload.metadata?.encoding) !== 'binary/encrypted';
        });
        expect(plain).toEqual([]);

        // The stream query's answer, as the server relays it, is encrypted by the worker too.
        const [from] = await new EncryptionCodec(keys).encode([
          defaultPayloadConverter.toPayload({ from: 0 }),
        ]);
        const answered = await server.client.workflowService.queryWorkflow({
          namespace: inject('temporalNamespace'),
          execution: { workflowId: runId },
          query: { queryType: STREAM_NAMES.read, queryArgs: { payloads: [from!] } },
        });
        const answer = answered.queryResult?.payloads?.[0];
        expect(Buffer.from(answer?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
        expect(Buffer.from(answer?.data ?? []).toString('latin1')).not.toContain(CANARY);
        const [decoded] = await new EncryptionCodec(keys).decode([answer!]);
        expect(shownText(StreamRead.parse(defaultPayloadConverter.fromPayload(decoded!)).items)).toEqual([
          ANSWER,
        ]);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  }, 120_000);
});
