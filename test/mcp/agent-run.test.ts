import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { KeelClient } from '../../src/client.js';
import type { Logger } from '../../src/logger.js';
import type { McpServerConfig } from '../../src/mcp/index.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { createKeelWorker } from '../../src/worker.js';
import { connectTestServer, TEST_API_KEY } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { deferred } from '../support/deferred.js';
import { RecordingLogger } from '../support/loggers.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import {
  childrenRunning,
  everythingServer,
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  filesystemServer,
  temporaryDirectory,
} from './support/servers.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A Keel worker on its own task queue with these MCP servers, talking to the scripted model. */
async function mcpWorker(
  model: ScriptedModel,
  mcpServers: McpServerConfig[],
  logger: Logger = new RecordingLogger(),
) {
  const taskQueue = `keel-mcp-${randomUUID()}`;
  const worker = await createKeelWorker({
    connection: server.connection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    workspace: await temporaryDirectory('keel-mcp-workspace-'),
    stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
    openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: model.url }),
    defaultModel: 'scripted-model',
    modelMode: 'background',
    pollSchedule: { initialMs: 20, maxMs: 100 },
    tools: fileTools,
    mcpServers,
    logger,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  return { worker, keel: new KeelClient(server.client, taskQueue) };
}

describe('an agent run with MCP tools on a real worker', () => {
  it('offers the tools to the model, runs calls as activities, asks approval, and stops the servers with the worker', async () => {
    const allowed = await temporaryDirectory('keel-mcp-run-');
    await mkdir(path.join(allowed, 'docs'));
    await writeFile(path.join(allowed, 'docs', 'plan.txt'), 'ship on friday\n');
    const target = path.join(allowed, 'docs', 'answer.txt');
    const model = await ScriptedModel.start([
      reply.calls({
        name: 'fs__read_text_file',
        arguments: { path: path.join(allowed, 'docs', 'plan.txt'), head: null, tail: null },
      }),
      reply.calls({ name: 'fs__write_file', arguments: { path: target, content: 'friday it is' } }),
      reply.text('Done.'),
    ]);
    try {
      const { worker, keel } = await mcpWorker(model, [
        filesystemServer('fs', allowed, {
          allowTools: ['read_text_file', 'write_file'],
          needsApproval: ['write_file'],
        }),
        everythingServer('every', { allowTools: ['echo', 'gzip-file-as-resource'] }),
      ]);
      // Listed when the worker was created: one process per server, before any run.
      expect(await childrenRunning(FILESYSTEM_SERVER)).toHaveLength(1);
      expect(await childrenRunning(EVERYTHING_SERVER)).toHaveLength(1);
      const runId = await worker.runUntil(async () => {
        const id = await keel.startRun({ task: 'Read the plan and write the answer.' });
        const waiting = await waitForState(keel, id, (state) => state.pendingApprovals.length === 1);
        expect(waiting.pendingApprovals[0]).toMatchObject({ name: 'fs__write_file' });
        await expect(readFile(target, 'utf8')).rejects.toThrow();
        await keel.approveCall(id, waiting.pendingApprovals[0]!.callId);
        expect(await keel.waitForResult(id)).toMatchObject({
          status: 'completed',
          finalText: 'Done.',
          toolCalls: 2,
        });
        return id;
      });

      const offered = (model.requests[0]?.body.tools ?? []) as Array<{ name: string; strict: boolean }>;
      const byName = new Map(offered.map((tool) => [tool.name, tool]));
      expect(byName.get('fs__read_text_file')?.strict).toBe(true);
      expect(byName.get('every__echo')?.strict).toBe(true);
      expect(byName.get('every__gzip-file-as-resource')?.strict).toBe(false);
      expect(byName.has('fs__list_directory')).toBe(false);
      expect(byName.has('read_file')).toBe(true);
      expect(model.requests[1]?.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_1_1', output: 'ship on friday\n' },
      ]);
      expect(await readFile(target, 'utf8')).toBe('friday it is');

      // The tool list the run used is in its history, with the MCP tools' schemas.
      const history = await historyText(server.client, runId);
      expect(history).toContain('fs__write_file');
      expect(history).toContain('every__gzip-file-as-resource');

      // The worker stopped, and took its MCP server processes with it.
      expect(await childrenRunning(FILESYSTEM_SERVER)).toEqual([]);
      expect(await childrenRunning(EVERYTHING_SERVER)).toEqual([]);
      model.assertDone();
    } finally {
      await model.close();
    }
  });
  it('cancels the MCP request when the run is cancelled during the call', async () => {
    const model = await ScriptedModel.start([
      reply.calls({
        name: 'every__trigger-long-running-operation',
        arguments: { duration: 120, steps: 120 },
      }),
    ]);
    const callSent = deferred<number>();
    const cancelSent = deferred<unknown>();
    const logger = new RecordingLogger();
    logger.info = (message) => {
      const sent = /^MCP server every: tap> (.*)$/.exec(message)?.[1];
      if (sent === undefined) return;
      const rpc = JSON.parse(sent) as { method?: string; id?: number; params?: { requestId?: unknown } };
      if (rpc.method === 'tools/call' && rpc.id !== undefined) callSent.resolve(rpc.id);
      if (rpc.method === 'notifications/cancelled') cancelSent.resolve(rpc.params?.requestId);
    };
    try {
      const { worker, keel } = await mcpWorker(
        model,
        [everythingServer('every', { tap: true, allowTools: ['trigger-long-running-operation'] })],
        logger,
      );
      await worker.runUntil(async () => {
        const runId = await keel.startRun({ task: 'Wait for the long operation.' });
        const requestId = await callSent.promise;
        await keel.cancelRun(runId);
        // The activity hears the cancel with its next heartbeat and aborts the MCP request.
        expect(await cancelSent.promise).toBe(requestId);
        const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});
