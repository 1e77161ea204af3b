import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { KeelClient } from '../../src/client.js';
import { ConfigError } from '../../src/config-error.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { KeelPlugin } from '../../src/plugin/keel-plugin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { connectTestServer, TEST_API_KEY } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

let server: TestServer;
let workflowBundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;
beforeAll(async () => {
  server = await connectTestServer();
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: new URL('../fixtures/shared-worker/workflows.ts', import.meta.url).pathname,
    logger: silentLogger,
  });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const lookUp = defineTool({
  name: 'look_up',
  description: 'Looks a word up.',
  schema: z.object({ word: z.string() }),
  readOnly: true,
  execute: ({ word }) => `${word}: a small boat`,
});

async function keelPlugin(url: string): Promise<KeelPlugin> {
  return new KeelPlugin({
    openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: url }),
    defaultModel: 'scripted-model',
    tools: [lookUp],
    stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
    pollSchedule: { initialMs: 20, maxMs: 100 },
    logger: silentLogger,
  });
}

describe('KeelPlugin', () => {
  it('adds Keel to a worker that also runs its own workflow and activities, neither disturbing the other', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'look_up', arguments: { word: 'keel' } }),
      reply.text('A keel is a small boat.'),
    ]);
    try {
      const taskQueue = `keel-plugin-${randomUUID()}`;
      const worker = await Worker.create({
        connection: server.connection,
        namespace: inject('temporalNamespace'),
        taskQueue,
        workflowBundle,
        activities: {
          greet: (name: string) => Promise.resolve(`hello ${name}`),
          callModel: (prompt: string) => Promise.resolve(`own model says ${prompt}`),
        },
        plugins: [await keelPlugin(model.url)],
      });
      const keel = new KeelClient(server.client, taskQueue);
      await worker.runUntil(async () => {
        const greeting: unknown = await server.client.workflow.execute('greeting', {
          taskQueue,
          workflowId: `greeting-${randomUUID()}`,
          args: ['ada'],
        });
        expect(greeting).toBe('hello ada / own model says ada');

        const runId = await keel.startRun({ task: 'What is a keel?' });
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'A keel is a small boat.',
          toolCalls: 1,
        });
        expect(model.requests[1]?.body.input).toEqual([
          { type: 'function_call_output', call_id: 'call_1_1', output: 'keel: a small boat' },
        ]);
        const scheduled = (await historyEvents(server.client, runId)).flatMap(
          (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
        );
        expect(scheduled).toEqual([
          'keel.describeWorker',
          'keel.callModel',
          'keel.executeTool',
          'keel.callModel',
        ]);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('refuses a worker whose own activity takes one of Keel’s names', async () => {
    const plugin = await keelPlugin('http://127.0.0.1:1');
    await expect(
      Worker.create({
        connection: server.connection,
        namespace: inject('temporalNamespace'),
        taskQueue: `keel-plugin-${randomUUID()}`,
        workflowBundle,
        activities: { 'keel.callModel': () => Promise.resolve('mine') },
        plugins: [plugin],
      }),
    ).rejects.toThrow(/already has an activity named keel\.callModel/);
  });

  it('says which options are wrong, all at once, misspelt ones too', () => {
    const attempt = () =>
      new KeelPlugin({
        openai: {} as never,
        defaultModel: ' ',
        limits: { maxTurns: 0 },
        mcpServers: [{ name: 'docs', command: 'npx', url: 'https://mcp.example.com/mcp' }] as never,
        ...({ enabledtools: ['read_file'] } as object),
      });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/openai: expected an OpenAI client/);
    expect(attempt).toThrow(/defaultModel: /);
    expect(attempt).toThrow(/limits\.maxTurns/);
    expect(attempt).toThrow(/mcpServers: [\s\S]*docs[\s\S]*either command[\s\S]*or url/);
    expect(attempt).toThrow(/Unrecognized key: "enabledtools"/);
  });

  it('needs no workspace: a worker with only its own tools starts anywhere, even in the home directory', async () => {
    const home = process.cwd();
    const plugin = new KeelPlugin({
      openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: 'http://127.0.0.1:1' }),
      defaultModel: 'scripted-model',
      tools: [lookUp],
      // The state directory inside the current directory is no problem without file tools there.
      stateDirectory: path.join(home, 'node_modules', '.keel-state-test'),
    });
    const { activities } = await plugin.prepare();
    const profile = await activities.describeWorker();
    expect(profile.tools.map((tool) => tool.name)).toEqual(['look_up']);
    await plugin.close();
  });

  it('refuses to describe tools too big for one Temporal payload, naming the largest', async () => {
    const wordy = defineTool({
      name: 'wordy',
      description: 'x'.repeat(1_700_000), // as a hostile MCP server might describe its tool
      schema: z.object({}),
      execute: () => 'ok',
    });
    const plugin = new KeelPlugin({
      openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: 'http://127.0.0.1:1' }),
      defaultModel: 'scripted-model',
      tools: [lookUp, wordy],
    });
    const { activities } = await plugin.prepare();
    await expect(activities.describeWorker()).rejects.toThrow(
      /tools take \d+ bytes to describe, more than the 1572864 bytes[\s\S]*largest are wordy \(\d+ bytes\), look_up/,
    );
    await plugin.close();
  });
});
