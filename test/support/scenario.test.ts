import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer } from './harness.js';
import type { TestServer } from './harness.js';
import { withScenario } from './scenario.js';
import { reply } from './scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const exists = (directory: string) =>
  access(directory).then(
    () => true,
    () => false,
  );

describe('withScenario', () => {
  it('runs a run to its result against the scripted model, on a task queue of its own', async () => {
    const queues: string[] = [];
    for (const answer of ['first', 'second']) {
      await withScenario(server, [reply.text(answer)], { tools: [] }, async ({ run, model, taskQueue }) => {
        queues.push(taskQueue);
        const { runId, result } = await run({ task: `say ${answer}` });
        expect(runId).toMatch(/^keel-/);
        expect(result).toMatchObject({ status: 'completed', finalText: answer, turns: 1 });
        expect(model.requests.map((request) => request.body.input)).toEqual([
          [{ type: 'message', role: 'user', content: `say ${answer}` }],
        ]);
      });
    }
    expect(new Set(queues).size).toBe(2);
  });

  it('fails when the run leaves scripted steps unused', async () => {
    const outcome = withScenario(
      server,
      [reply.text('used'), reply.text('never asked for')],
      { tools: [] },
      ({ run }) => run({ task: 'one turn' }),
    );
    await expect(outcome).rejects.toThrow('1 scripted step(s) were never requested');
  });

  it('removes the temporary workspace it made, and leaves one it was given', async () => {
    let made = '';
    await withScenario(server, [], { tools: [] }, async ({ workspace }) => {
      made = workspace;
      expect(await exists(workspace)).toBe(true);
    });
    expect(made).not.toBe('');
    expect(await exists(made)).toBe(false);

    const given = await mkdtemp(path.join(tmpdir(), 'keel-given-'));
    try {
      await withScenario(server, [], { tools: [], workspace: given }, ({ workspace }) => {
        expect(workspace).toBe(given);
        return Promise.resolve();
      });
      expect(await exists(given)).toBe(true);
    } finally {
      await rm(given, { recursive: true, force: true });
    }
  });
});
