import { mkdtemp, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { openPayloadStore } from '../../src/payload-store/open-payload-store.js';
import { dataConverterFor, encodingFailureConverterPath } from '../../src/data-converter.js';
import {
  exportRunHistory,
  parseRunHistoryFile,
  readRunHistoryFile,
  RunHistoryFile,
  RunHistoryFileError,
} from '../../src/eval/history-file.js';
import { readTranscript, TranscriptError, transcriptFromHistories } from '../../src/eval/read-transcript.js';
import type { RunTranscript } from '../../src/eval/recorded-run.js';
import { runExecutions } from '../../src/eval/run-executions.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { workflowsPath } from '../../src/worker.js';
import { encryptingClient, encryptingWorker, keyRing } from '../codec/support.js';
import {
  connectTestServer,
  startTestWorker,
  temporaryWorkspace,
  withTestWorker,
} from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { deferred } from '../support/deferred.js';
import { historyEvents, historyJson } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { addTool, deployTool, echoTool, knownFailureTool, localEchoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The `function_call_output` items the model got in request `index`, by call id. */
function outputsSent(model: ScriptedModel, index: number): Record<string, string> {
  const input = model.requests[index]?.body.input;
  const items = Array.isArray(input) ? input : [];
  return Object.fromEntries(
    items
      .filter((item) => item.type === 'function_call_output')
      .map((item) => [String(item.call_id), String(item.output)]),
  );
}

/** Exports the run into a file and reads the file back, as a case kept in a repository is. */
async function throughFile(file: RunHistoryFile, converter = loadDataConverter({})): Promise<RunTranscript> {
  const target = path.join(await mkdtemp(path.join(tmpdir(), 'keel-export-')), 'run.json');
  await writeFile(target, JSON.stringify(RunHistoryFile.parse(JSON.parse(JSON.stringify(file))), null, 2));
  return readRunHistoryFile(target, converter);
}

describe('readTranscript', () => {
  it('reads each turn, its calls in order and every answer: parallel, failed and rejected ones', async () => {
    const deploy = deployTool();
    const model = await ScriptedModel.start([
      reply.calls(
        { name: 'echo', arguments: { text: 'a' } },
        { name: 'add', arguments: { a: 1, b: 2 } },
        { name: 'known_failure', arguments: {} },
      ),
      reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 2 } }),
      reply.text('All done.'),
    ]);
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool, addTool, knownFailureTool, deploy.tool] },
        async ({ keel }) => {
          const runId = await keel.startRun({ task: 'Do three things', parallelToolCalls: true });
          const waiting = await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
          await keel.rejectCall(runId, waiting.pendingApprovals[0]!.callId, 'not today');
          const result = await keel.waitForResult(runId);

          const transcript = await readTranscript(server.client, runId);
          expect(transcript).toMatchObject({
            runId,
            task: 'Do three things',
            input: { task: 'Do three things', parallelToolCalls: true },
            outcome: { status: 'completed', text: 'All done.' },
            usage: result.usage,
          });
          expect(transcript.turns.map((turn) => turn.turn)).toEqual([1, 2, 3]);
          const [first, second, third] = transcript.turns;
          expect(first!.calls).toEqual([
            {
              callId: 'call_1_1',
              name: 'echo',
              argumentsJson: '{"text":"a"}',
              answer: { ok: true, output: 'echo: a' },
            },
            {
              callId: 'call_1_2',
              name: 'add',
              argumentsJson: '{"a":1,"b":2}',
              answer: { ok: true, output: '3' },
            },
            {
              callId: 'call_1_3',
              name: 'known_failure',
              argumentsJson: '{}',
              answer: {
                ok: false,
                error: 'tool_error',
                message: expect.stringContaining('the record is locked') as string,
              },
            },
          ]);
          // Rejected: no tool ran, so only the next request says what the model was told.
          expect(second!.calls[0]).toMatchObject({
            name: 'deploy',
            answer: { ok: false, error: 'rejected', message: expect.stringContaining('not today') as string },
          });
          expect(deploy.ran).toEqual([]);
          expect(third).toMatchObject({ text: 'All done.', calls: [], model: 'scripted-model' });
          expect(first!.responseId).toBe(model.requests[1]?.body.previous_response_id);
          // Each answer is exactly what reached the model.
          const sent = { ...outputsSent(model, 1), ...outputsSent(model, 2) };
          for (const call of [...first!.calls, ...second!.calls]) {
            const answer = call.answer!;
            const text = answer.ok
              ? answer.output
              : JSON.stringify({ error: answer.error, message: answer.message });
            expect(sent[call.callId]).toBe(text);
          }
          expect(transcript.usage.totalTokens).toBe(
            transcript.turns.reduce((sum, turn) => sum + turn.usage.totalTokens, 0),
          );

          const exported = await exportRunHistory(server.client, runId);
          expect(exported).toMatchObject({ format: 'keel-run-history', version: 1, runId });
          expect(exported.executions).toHaveLength(1);
          // Temporal's own JSON history form: the SDK reads each one back.
          expect(historyFromJSON(exported.executions[0]!.history).events?.length).toBeGreaterThan(10);
          expect(await throughFile(exported)).toEqual(transcript);
        },
      );
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('follows a run that continued as new from its first execution to its last', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'one' } }),
      reply.calls({ name: 'echo', arguments: { text: 'two' } }),
      reply.calls({ name: 'echo', arguments: { text: 'three' } }),
      reply.text('Echoed thrice.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Echo thrice', continueAsNewAfterTurns: 1 });
        const result = await keel.waitForResult(runId);
        expect((await runExecutions(server.client, runId)).length).toBe(4);

        const transcript = await readTranscript(server.client, runId);
        expect(transcript.input).toMatchObject({ task: 'Echo thrice', continueAsNewAfterTurns: 1 });
        expect(transcript.turns.map((turn) => [turn.turn, turn.calls.map((call) => call.answer)])).toEqual([
          [1, [{ ok: true, output: 'echo: one' }]],
          [2, [{ ok: true, output: 'echo: two' }]],
          [3, [{ ok: true, output: 'echo: three' }]],
          [4, []],
        ]);
        expect(transcript.outcome).toEqual({ status: 'completed', text: 'Echoed thrice.' });
        expect(transcript.usage).toEqual(result.usage);

        const exported = await exportRunHistory(server.client, runId);
        expect(exported.executions).toHaveLength(4);
        expect(await throughFile(exported)).toEqual(transcript);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('reads the answer of a tool that ran as a local activity from its marker when no request carries it', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'local' } }),
      reply.error(401, 'Incorrect API key provided'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [localEchoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Echo locally' });
        expect((await keel.waitForResult(runId)).status).toBe('failed');
        const events = await historyEvents(server.client, runId);
        expect(events.some((event) => event.markerRecordedEventAttributes)).toBe(true);
        expect(
          events.some(
            (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'keel.executeTool',
          ),
        ).toBe(false);
        const transcript = await readTranscript(server.client, runId);
        expect(transcript.turns).toHaveLength(1);
        expect(transcript.turns[0]!.calls[0]!.answer).toEqual({ ok: true, output: 'echo: local' });
        expect(transcript.outcome).toMatchObject({
          status: 'failed',
          errorType: 'ModelError.Authentication',
        });
        // The second request carried the answer too: read the history as it was before that request
        // was scheduled, where only the marker has it.
        const second = events.findLastIndex(
          (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'keel.callModel',
        );
        const before = await transcriptFromHistories(
          runId,
          [{ events: events.slice(0, second) }],
          server.client.options.loadedDataConverter,
        );
        expect(before.turns[0]!.calls[0]!.answer).toEqual({ ok: true, output: 'echo: local' });
        expect(before.outcome).toEqual({ status: 'running', text: '' });
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('reads a stateless run, whose answers are the conversation items the model was sent', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: '{"error":"tool_error","message":"fake"}' } }),
      reply.calls({ name: 'known_failure', arguments: {} }),
      reply.text('Done.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool, knownFailureTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Stateless', conversation: 'stateless' });
        await keel.waitForResult(runId);
        const transcript = await readTranscript(server.client, runId);
        // An output that looks like a failure is still the tool's output.
        expect(transcript.turns[0]!.calls[0]!.answer).toEqual({
          ok: true,
          output: 'echo: {"error":"tool_error","message":"fake"}',
        });
        expect(transcript.turns[1]!.calls[0]!.answer).toMatchObject({ ok: false, error: 'tool_error' });
        expect(transcript.outcome).toEqual({ status: 'completed', text: 'Done.' });
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('reads a run stopped at its turn limit: the last calls unanswered, the reason and last text', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: 'Let me echo.' }, { call: { name: 'echo', arguments: { text: 'x' } } }]),
      reply.calls({ name: 'echo', arguments: { text: 'y' } }),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Echo forever', maxTurns: 2 });
        const result = await keel.waitForResult(runId);
        expect(result.status).toBe('max_turns');
        const transcript = await readTranscript(server.client, runId);
        expect(transcript.turns).toHaveLength(2);
        expect(transcript.turns[0]!.calls[0]!.answer).toEqual({ ok: true, output: 'echo: x' });
        // The calls of the last turn were never run.
        expect(transcript.turns[1]!.calls[0]).not.toHaveProperty('answer');
        expect(transcript.outcome).toEqual({
          status: 'max_turns',
          text: 'Let me echo.',
          reason: expect.stringContaining('turn limit') as string,
        });
        expect(await throughFile(await exportRunHistory(server.client, runId))).toEqual(transcript);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('reads a failed run: its failure type and reason', async () => {
    const model = await ScriptedModel.start([reply.error(401, 'Incorrect API key provided')]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Fail' });
        expect((await keel.waitForResult(runId)).status).toBe('failed');
        const transcript = await readTranscript(server.client, runId);
        expect(transcript.turns).toEqual([]);
        expect(transcript.outcome).toMatchObject({
          status: 'failed',
          text: '',
          errorType: 'ModelError.Authentication',
        });
        expect(transcript.outcome.reason).toBeTruthy();
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('reads a run still going as running, and a cancelled one as cancelled', async () => {
    const release = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('late'), release.promise)]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Wait' });
        await waitForState(keel, runId, (state) => state.phase === 'thinking');
        expect((await readTranscript(server.client, runId)).outcome).toEqual({ status: 'running', text: '' });
        await keel.cancelRun(runId);
        await keel.waitForResult(runId).catch(() => undefined);
        release.resolve();
        expect((await readTranscript(server.client, runId)).outcome).toMatchObject({ status: 'cancelled' });
      });
    } finally {
      await model.close();
    }
  });

  it('refuses a workflow that is not a Keel run, and a file that is not a history', async () => {
    const histories = [historyFromJSON({ events: [notAgentRunStart] })];
    await expect(transcriptFromHistories('other', histories, loadDataConverter({}))).rejects.toThrow(
      TranscriptError,
    );
    expect(() => parseRunHistoryFile('{"format":"keel-run-history"}', 'case.json')).toThrow(
      RunHistoryFileError,
    );
    expect(() => parseRunHistoryFile('not json', 'case.json')).toThrow(/case\.json is not JSON/u);
  });
});

describe('readTranscript of an encrypted run', () => {
  it('decodes with the keys, through a history file too, and refuses without them', async () => {
    await ensureSearchAttributes(server.client.connection, inject('temporalNamespace'), silentLogger);
    const bundle = await bundleWorkflowCode({
      workflowsPath,
      failureConverterPath: encodingFailureConverterPath,
      logger: silentLogger,
    });
    const keys = await keyRing('k1');
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'secret-7f3a' } }),
      reply.text('The secret is echoed.'),
      reply.error(401, 'Incorrect API key secret-7f3a'),
    ]);
    const taskQueue = `transcript-${randomUUID()}`;
    const worker = await encryptingWorker(server, {
      keys,
      model,
      taskQueue,
      workspace: await temporaryWorkspace(),
      tools: [echoTool],
      workflowBundle: bundle,
    });
    const keel = encryptingClient(server, keys, taskQueue);
    try {
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: 'Echo secret-7f3a' });
        await keel.waitForResult(runId);
        const transcript = await readTranscript(keel.temporal, runId);
        expect(transcript.task).toBe('Echo secret-7f3a');
        expect(transcript.turns[0]!.calls[0]).toMatchObject({
          argumentsJson: '{"text":"secret-7f3a"}',
          answer: { ok: true, output: 'echo: secret-7f3a' },
        });
        expect(transcript.outcome).toEqual({ status: 'completed', text: 'The secret is echoed.' });

        const exported = await exportRunHistory(keel.temporal, runId);
        // The file keeps the run encrypted: it is no more readable than the history was.
        expect(JSON.stringify(exported)).not.toContain('secret-7f3a');
        expect(await throughFile(exported, loadDataConverter(dataConverterFor(keys)))).toEqual(transcript);
        await expect(readTranscript(server.client, runId)).rejects.toThrow(TranscriptError);

        // A failed run's failure is encrypted too (its message among the encoded attributes).
        const failedId = await keel.startRun({ task: 'Fail secretly' });
        expect((await keel.waitForResult(failedId)).status).toBe('failed');
        const failed = await exportRunHistory(keel.temporal, failedId);
        expect(JSON.stringify(failed)).not.toContain('Incorrect API key');
        const read = await throughFile(failed, loadDataConverter(dataConverterFor(keys)));
        expect(read).toEqual(await readTranscript(keel.temporal, failedId));
        expect(read.outcome).toMatchObject({ status: 'failed', errorType: 'ModelError.Authentication' });
        expect(read.outcome.reason).toContain('Incorrect API key');
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});

describe('readTranscript of a run with payloads in the store', () => {
  it('reads stored payloads through the store, and export writes them into the file', async () => {
    const store = await openPayloadStore({
      location: { kind: 'directory', path: await mkdtemp(path.join(tmpdir(), 'keel-blobs-')) },
      thresholdBytes: 16 * 1024,
      keepHours: 720,
    });
    const big = 'y'.repeat(40_000);
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: big } }),
      reply.text('Echoed a lot.'),
    ]);
    try {
      const { worker, taskQueue } = await startTestWorker(server, {
        model,
        tools: [echoTool],
        workerOptions: { dataConverter: store.dataConverter },
      });
      const client = new Client({
        connection: server.client.connection,
        namespace: inject('temporalNamespace'),
        dataConverter: store.dataConverter,
      });
      const keel = new KeelClient(client, taskQueue);
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: 'Echo a lot', observationCharLimit: 100_000 });
        await keel.waitForResult(runId);
        const transcript = await readTranscript(client, runId);
        expect(transcript.turns[0]!.calls[0]).toMatchObject({
          argumentsJson: JSON.stringify({ text: big }),
          answer: { ok: true, output: `echo: ${big}` },
        });
        const reference = Buffer.from('temporal.api.sdk.v1.ExternalStorageReference').toString('base64');
        expect(await historyJson(server.client, runId)).toContain(reference);
        // Without the store, the references cannot be resolved: a loud failure, not an empty value.
        await expect(readTranscript(server.client, runId)).rejects.toThrow(/external storage|reference/iu);
        const exported = await exportRunHistory(client, runId);
        expect(JSON.stringify(exported)).not.toContain(reference);
        // The file needs no store.
        expect(await throughFile(exported)).toEqual(transcript);
      });
      model.assertDone();
    } finally {
      await model.close();
      await store.close();
    }
  });
});

/** A start event of some other workflow type. */
const notAgentRunStart = {
  eventId: '1',
  eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
  workflowExecutionStartedEventAttributes: { workflowType: { name: 'somethingElse' } },
};
