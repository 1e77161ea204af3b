import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { Workspace } from '../../src/tools/workspace.js';
import { refuseUnprotectedKeelDirectories } from '../../src/tools/workspace-keel-state.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { createKeelWorker } from '../../src/worker.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';

let base: string;
let root: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-state-check-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, '.keel'), { recursive: true });
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function check(
  directories: Record<string, string>,
  protect?: readonly string[],
  options: { commands?: boolean } = {},
): Promise<ConfigError | undefined> {
  const workspace = await Workspace.open(root, protect ? { protect } : {});
  const keel = Object.entries(directories).map(([variable, directory]) => ({
    variable,
    path: directory,
    holds: 'Keel data',
  }));
  return refuseUnprotectedKeelDirectories(workspace, keel, options).then(
    () => undefined,
    (error: unknown) => {
      expect(error).toBeInstanceOf(ConfigError);
      return error as ConfigError;
    },
  );
}

describe('the start-up check of Keel directories in the workspace', () => {
  it('accepts directories outside the workspace, and inside when protected', async () => {
    expect(await check({ KEEL_STATE_DIR: path.join(base, 'state') })).toBeUndefined();
    expect(await check({ KEEL_DATA_DIR: path.join(root, '.keel') })).toBeUndefined();
    expect(await check({ KEEL_STATE_DIR: path.join(root, '.keel', 'worker-state') })).toBeUndefined();
    expect(await check({ KEEL_STATE_DIR: path.join(root, 'var', 'keel') }, ['var/**'])).toBeUndefined();
  });

  it('refuses an unprotected one, naming the variables and what to add', async () => {
    const error = await check({ KEEL_DATA_DIR: path.join(root, 'data', 'temporal') });
    expect(error?.message).toBe(
      `KEEL_DATA_DIR (${path.join(root, 'data', 'temporal')}, Keel data) lies inside the workspace ` +
        `(KEEL_WORKSPACE=${root}) and KEEL_WORKSPACE_PROTECT (now ".git,.keel") does not protect it, so ` +
        'the agent could change it: move KEEL_DATA_DIR out of the workspace, or add "data/temporal" to ' +
        'KEEL_WORKSPACE_PROTECT.',
    );
  });

  it('with run_command offered, refuses one that only a pattern below the workspace root protects', async () => {
    const commands = { commands: true };
    const nested = path.join(root, 'sub', '.keel');
    // The file tools protect .keel at any depth, but the command sandbox binds root entries only.
    expect(await check({ KEEL_DATA_DIR: nested })).toBeUndefined();
    const error = await check({ KEEL_DATA_DIR: nested }, undefined, commands);
    expect(error?.message).toContain(`lies inside the workspace (KEEL_WORKSPACE=${root}) below "sub"`);
    expect(error?.message).toContain('or add "sub" to KEEL_WORKSPACE_PROTECT.');
    expect(await check({ KEEL_DATA_DIR: path.join(root, '.keel') }, undefined, commands)).toBeUndefined();
    expect(await check({ KEEL_DATA_DIR: nested }, ['.keel', 'sub'], commands)).toBeUndefined();
    expect(
      await check({ KEEL_STATE_DIR: path.join(root, 'var', 'keel') }, ['var/**'], commands),
    ).toBeUndefined();
  });

  it('refuses the default .keel once the operator drops it from the protection', async () => {
    const error = await check({ KEEL_DATA_DIR: path.join(root, '.keel') }, ['.git']);
    expect(error?.message).toContain('KEEL_WORKSPACE_PROTECT (now ".git") does not protect it');
    expect(await check({ KEEL_DATA_DIR: path.join(root, '.keel') }, []))?.toMatchObject({
      message: expect.stringContaining('(now "none")') as unknown,
    });
  });

  it('finds a directory by its real path: through a link, with parts not created yet, in another case', async () => {
    await mkdir(path.join(root, 'records'));
    await symlink(path.join(root, 'records'), path.join(base, 'looks-outside'));
    expect((await check({ KEEL_STATE_DIR: path.join(base, 'looks-outside', 'keel') }))?.message).toContain(
      'add "records/keel" to KEEL_WORKSPACE_PROTECT',
    );
    expect((await check({ KEEL_STATE_DIR: path.join(root, 'not', 'yet', 'there') }))?.message).toContain(
      'add "not/yet/there"',
    );
    expect(await check({ KEEL_DATA_DIR: path.join(root, '.KEEL') })).toBeUndefined();
  });

  it('refuses a Keel directory that holds the workspace', async () => {
    for (const directory of [root, base]) {
      const error = await check({ KEEL_STATE_DIR: directory });
      expect(error?.message).toContain(`KEEL_STATE_DIR (${directory}, Keel data) holds the workspace`);
    }
  });
});

describe('a worker', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await connectTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('does not start when its state directory lies inside its workspace unprotected', async () => {
    const attempt = createKeelWorker({
      connection: server.connection,
      namespace: inject('temporalNamespace'),
      taskQueue: 'never-polled',
      workspace: root,
      stateDirectory: path.join(root, 'state'),
      openai: createOpenAIClient({ apiKey: 'unused', baseURL: 'http://127.0.0.1:9/v1' }),
      defaultModel: 'unused',
      modelMode: 'foreground',
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(
      /^KEEL_STATE_DIR \(.*\/ws\/state, the worker's records of side effects\) lies inside/,
    );
  });

  it('tells the model that .git and .keel are protected, and the run goes on with them intact', async () => {
    await mkdir(path.join(root, '.git', 'hooks'), { recursive: true });
    const gitConfig = '[core]\n\tbare = false\n';
    await writeFile(path.join(root, '.git', 'config'), gitConfig);
    await writeFile(path.join(root, '.keel', 'temporal.db'), 'SQLite format 3\0');
    const fsmonitor = { path: '.git/config', oldText: '[core]\n', newText: '[core]\n\tfsmonitor = "sh x"\n' };
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'edit_file', arguments: fsmonitor },
          { name: 'write_file', arguments: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\nsh x\n' } },
          { name: 'write_file', arguments: { path: '.keel/temporal.db', content: 'gone' } },
        ),
        reply.text('I left them alone.'),
      ],
      { workspace: root },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'plant a hook' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 3 });
        const outputs = (model.requests[1]?.body.input as { type: string; output?: string }[])
          .filter((item) => item.type === 'function_call_output')
          .map((item) => JSON.parse(item.output ?? '{}') as { error?: string; message?: string });
        expect(outputs).toHaveLength(3);
        expect(outputs.map((output) => output.error)).toEqual(['tool_error', 'tool_error', 'tool_error']);
        expect(
          outputs.map((output) =>
            /^Path refused: "(.*)" is protected by the worker \(pattern "(.*?)"\)/
              .exec(output.message ?? '')
              ?.slice(1),
          ),
        ).toEqual([
          ['.git/config', '.git'],
          ['.git/hooks/pre-commit', '.git'],
          ['.keel/temporal.db', '.keel'],
        ]);
      },
    );
    await expect(readFile(path.join(root, '.git', 'config'), 'utf8')).resolves.toBe(gitConfig);
    await expect(readFile(path.join(root, '.keel', 'temporal.db'), 'utf8')).resolves.toBe(
      'SQLite format 3\0',
    );
    await expect(readFile(path.join(root, '.git', 'hooks', 'pre-commit'))).rejects.toThrow(/ENOENT/);
  });
});
