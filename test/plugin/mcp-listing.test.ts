import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOpenAIClient } from '../../src/model/client.js';
import { KeelPlugin } from '../../src/plugin/keel-plugin.js';
import { RecordingLogger } from '../support/loggers.js';
import { startHttpEverythingServer } from '../mcp/support/servers.js';

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
