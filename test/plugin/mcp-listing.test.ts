import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { createOpenAIClient } from '../../src/model/client.js';
import { KeelPlugin } from '../../src/plugin/keel-plugin.js';
import { RecordingLogger } from '../support/loggers.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer } from '../support/harness.js';
import {
  childrenRunning,
  FILESYSTEM_SERVER,
  filesystemServer,
  startHttpEverythingServer,
  temporaryDirectory,
} from '../mcp/support/servers.js';

describe('MCP tools listed for each run', () => {
  it('follow the server: a run that starts while it is down gets the last listing, with a warning', async () => {
    const server = await startHttpEverythingServer();
    const logger = new RecordingLogger();
    const plugin = new KeelPlugin({
      openai: createOpenAIClient({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:1' }),
      defaultModel: 'scripted-model',
      tools: [],
      mcpServers: [
        { name: 'every', url: server.url, allowTools: ['echo', 'get-sum', 'gzip-file-as-resource'] },
      ],
      stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
      logger,
    });
    try {
      const { activities } = await plugin.prepare();
      const names = async () => (await activities.describeWorker()).tools.map((tool) => tool.name);
      const listed = ['every__echo', 'every__get-sum', 'every__gzip-file-as-resource'];
      expect(await names()).toEqual(listed);
      expect(await names()).toEqual(listed);
      // What a listing finds is said once, however many runs list the server again.
      const notStrict = logger.entries.filter((entry) => entry.message.includes('without strict mode'));
      expect(notStrict).toHaveLength(1);
      await server.stop();
      expect(await names()).toEqual(listed);
      expect(logger.entries.some((entry) => entry.message.includes('could not be listed again'))).toBe(true);
    } finally {
      await plugin.close();
      await server.stop();
    }
  });
});

describe('one KeelPlugin on two workers', () => {
  it('keeps its MCP server process until the last of them stops', async () => {
    const temporal = await connectTestServer();
    const plugin = new KeelPlugin({
      openai: createOpenAIClient({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:1' }),
      defaultModel: 'scripted-model',
      tools: [],
      mcpServers: [filesystemServer('files', await temporaryDirectory('keel-mcp-shared-'))],
      stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
    });
    const worker = () =>
      Worker.create({
        connection: temporal.connection,
        namespace: inject('temporalNamespace'),
        taskQueue: `keel-shared-plugin-${randomUUID()}`,
        workflowBundle: { codePath: inject('workflowBundlePath') },
        plugins: [plugin],
      });
    try {
      await plugin.prepare();
      const [first, second] = [await worker(), await worker()];
      const stopSecond = deferred();
      const secondRun = second.runUntil(stopSecond.promise).catch((error: unknown) => error);
      await first.runUntil(async () => {
        expect(await childrenRunning(FILESYSTEM_SERVER)).toHaveLength(1);
      });
      // The first worker stopped; the second still runs and still has its server.
      expect(await childrenRunning(FILESYSTEM_SERVER)).toHaveLength(1);
      stopSecond.resolve();
      expect(await secondRun).toBeUndefined();
      expect(await childrenRunning(FILESYSTEM_SERVER)).toEqual([]);
    } finally {
      await plugin.close();
      await temporal.close();
    }
  });
});
