import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { ConfigError } from '../../src/config-error.js';
import { loadToolsModule } from '../../src/plugin/tools-module.js';
import { cliEnvironment, startCli } from '../support/cli.js';
import { connectTestServer, TEST_API_KEY, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

const fixtures = fileURLToPath(new URL('../fixtures/tools-module/', import.meta.url));

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('a tools module', () => {
  it('gives its tools and agents, loaded from TypeScript', async () => {
    const { tools, agents } = await loadToolsModule('my-tools.ts', fixtures);
    expect(tools?.map((tool) => tool.name)).toEqual(['shout']);
    expect(agents?.map((agent) => agent.name)).toEqual(['shouter']);
  });

  it.each([
    ['missing.js', /The tools module missing\.js does not exist \(looked for .*missing\.js\)/],
    ['nothing.mjs', /exports none of tools, agents, mcpServers: export const tools = \[defineTool/],
    [
      'default-export.mjs',
      /exports something else than Keel expects:\n {2}tools\[0\]: expected a tool made by defineTool/,
    ],
  ])('%s is refused with a ConfigError that says why', async (file, message) => {
    const attempt = loadToolsModule(file, fixtures);
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(message);
  });

  it('is offered by `keel worker --tools`: a run starts its agent by name', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'shout', arguments: { text: 'ahoy' } }),
      reply.text('AHOY!'),
    ]);
    const taskQueue = `keel-tools-module-${randomUUID()}`;
    const worker = startCli(['worker', '--tools', path.join(fixtures, 'my-tools.ts')], {
      env: cliEnvironment({
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        OPENAI_BASE_URL: model.url,
        // The scripted model keeps conversations as the OpenAI API does; the test reads the chained input.
        KEEL_CONVERSATION: 'chained',
        OPENAI_API_KEY: TEST_API_KEY,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_STATE_DIR: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
      }),
      cwd: await temporaryWorkspace(),
    });
    try {
      await worker.waitForOutput(`Keel worker on task queue "${taskQueue}"`);
      const keel = new KeelClient(server.client, taskQueue);
      const runId = await keel.startRun({ agent: 'shouter', task: 'Shout ahoy' });
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'AHOY!' });
      // The module's agent: its instructions and its one tool, not the worker's built-in ones.
      expect(model.requests[0]?.body.instructions).toBe('Shout whatever you are given.');
      expect(model.requests[0]?.body.tools?.map((tool: { name: string }) => tool.name)).toEqual(['shout']);
      expect(model.requests[1]?.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_1_1', output: 'AHOY!' },
      ]);
      model.assertDone();
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await model.close();
    }
  });
});
