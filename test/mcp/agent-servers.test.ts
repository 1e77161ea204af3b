import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/index.js';
import { ConfigError } from '../../src/config-error.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { KeelPlugin } from '../../src/plugin/keel-plugin.js';
import type { KeelOptions } from '../../src/plugin/keel-options.js';
import { defineTool } from '../../src/tools/define-tool.js';
import {
  childrenRunning,
  FILESYSTEM_SERVER,
  filesystemServer,
  temporaryDirectory,
} from './support/servers.js';

const lookUp = defineTool({
  name: 'look_up',
  description: 'Looks a word up.',
  schema: z.object({ word: z.string() }),
  readOnly: true,
  execute: ({ word }) => word,
});

async function plugin(agents: KeelOptions['agents']): Promise<KeelPlugin> {
  return new KeelPlugin({
    openai: createOpenAIClient({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:1' }),
    defaultModel: 'scripted-model',
    tools: [lookUp],
    agents,
    stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
  });
}

describe('MCP servers declared on an agent', () => {
  it('are started by the worker, and their tools are offered only in that agent’s runs', async () => {
    const shelf = await temporaryDirectory('keel-mcp-agent-');
    await writeFile(path.join(shelf, 'book.txt'), 'Once upon a time.\n');
    const keel = await plugin([
      defineAgent({
        name: 'librarian',
        instructions: 'Read from the shelf.',
        mcpServers: [filesystemServer('shelf', shelf, { allowTools: ['read_text_file'] })],
      }),
      defineAgent({ name: 'clerk', instructions: 'Look words up.' }),
    ]);
    try {
      const { activities } = await keel.prepare();
      expect(await childrenRunning(FILESYSTEM_SERVER)).toHaveLength(1);
      const names = async (agent?: string) =>
        (await activities.describeWorker(agent === undefined ? {} : { agent })).tools.map(
          (tool) => tool.name,
        );
      expect(await names()).toEqual(['look_up']);
      expect(await names('clerk')).toEqual(['look_up']);
      expect(await names('librarian')).toEqual(['look_up', 'shelf__read_text_file']);
      const librarian = (await activities.describeWorker({ agent: 'librarian' })).agent!;
      const clerk = (await activities.describeWorker({ agent: 'clerk' })).agent!;
      // The history records the agent, never its servers' configuration.
      expect(librarian).not.toHaveProperty('mcpServers');
      expect(librarian.version).not.toBe(clerk.version);
    } finally {
      await keel.close();
    }
    expect(await childrenRunning(FILESYSTEM_SERVER)).toEqual([]);
  });

  it('are not another agent’s to offer', async () => {
    const shelf = await temporaryDirectory('keel-mcp-agent-');
    const keel = await plugin([
      defineAgent({
        name: 'librarian',
        instructions: 'Read from the shelf.',
        mcpServers: [filesystemServer('shelf', shelf, { allowTools: ['read_text_file'] })],
      }),
      defineAgent({ name: 'thief', instructions: 'Take the books.', tools: ['shelf__read_text_file'] }),
    ]);
    const attempt = keel.prepare();
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(
      /Agent thief names tool\(s\) shelf__read_text_file that this worker does not have/,
    );
    expect(await childrenRunning(FILESYSTEM_SERVER)).toEqual([]);
  });
});
