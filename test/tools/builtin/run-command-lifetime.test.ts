import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunCommandTool } from '../../../src/tools/builtin/run-command.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { directContext, nodeVisible, outcome, runCommandCall } from '../../support/run-command-call.js';
import { processesWith, sleepMarker } from '../../support/run-command-processes.js';

/**
 * No process a command starts outlives its call, however it hides: setsid, a detached Node child, a
 * Python double fork into a new session, a git alias, after the call ends, times out, is cancelled,
 * or its worker is SIGKILLed. Each process carries a marker; the host's /proc is searched for it.
 */
let base: string;
let workspace: Workspace;
let marker: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-lifetime-')));
  await mkdir(path.join(base, 'ws'));
  workspace = await Workspace.open(path.join(base, 'ws'));
  marker = sleepMarker();
});

afterEach(async () => {
  // A failing test must not leave its sleepers for the next ones.
  for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  await rm(base, { recursive: true, force: true });
});

const python = '/usr/bin/python3';
const git = '/usr/bin/git';

/** Commands that each leave a process running in a session of its own, and then exit at once. */
function escapes(marker: string): Array<{ name: string; program: string; args: string[]; skip?: boolean }> {
  return [
    { name: 'setsid', program: 'setsid', args: ['-f', 'sleep', marker] },
    {
      name: 'node, detached',
      program: process.execPath,
      args: [
        '-e',
        `require('child_process').spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref()`,
      ],
    },
    {
      name: 'python, os.setsid() after a fork',
      program: python,
      args: [
        '-c',
        'import os, sys, time\nif os.fork() == 0:\n  os.setsid()\n  time.sleep(float(sys.argv[1]))',
        marker,
      ],
      skip: !existsSync(python),
    },
    {
      name: 'a git alias',
      program: git,
      args: ['-c', `alias.bg=!setsid -f sleep ${marker}`, 'bg'],
      skip: !existsSync(git),
    },
  ];
}

const options = { allow: ['setsid', 'sh', process.execPath, python, git], ...nodeVisible() };

describe('run_command process lifetime', () => {
  for (const [index, { name, skip }] of escapes('').entries()) {
    it.skipIf(skip === true)(`leaves nothing running after the call ends: ${name}`, async () => {
      const { program, args } = escapes(marker)[index]!;
      const observation = await runCommandCall(workspace, { program, args }, options);
      expect(outcome(observation)).toEqual({
        ok: true,
        text: expect.stringMatching(/^exit code: 0\n/) as string,
      });
      expect(processesWith(marker)).toEqual([]);
    });
  }

  it('leaves nothing running after a timeout, a process in its own session included', async () => {
    const args = ['-c', `setsid -f sleep ${marker}; sleep ${marker}`];
    const observation = await runCommandCall(workspace, { program: 'sh', args, timeoutSeconds: 1 }, options);
    expect(outcome(observation).text).toMatch(/^stopped: still running after 1 second/);
    expect(processesWith(marker)).toEqual([]);
  });

  it('leaves nothing running after a cancel, a process in its own session included', async () => {
    const controller = new AbortController();
    const tool = createRunCommandTool(options, workspace);
    let before: number[] = [];
    const text = (await tool.execute(
      { program: 'sh', args: ['-c', `setsid -f sleep ${marker}; echo started; sleep ${marker}`], cwd: '.' },
      directContext(controller.signal, (details) => {
        if ((details as { stdoutBytes: number }).stdoutBytes > 0) {
          // Both sleepers exist before the line is written; the abort must end them all.
          before = processesWith(marker);
          controller.abort();
        }
      }),
    )) as string;
    expect(text).toMatch(/^stopped: the call was cancelled/);
    // bubblewrap, its init, the shell and the two sleepers all carry the marker in their command line.
    expect(before.length).toBeGreaterThanOrEqual(4);
    expect(processesWith(marker)).toEqual([]);
  });

  it('leaves nothing running when its worker is SIGKILLed mid-call', async () => {
    const runner = fileURLToPath(new URL('../../support/process/run-command-main.ts', import.meta.url));
    const started = path.join(workspace.root, 'started');
    const args = {
      program: 'sh',
      args: ['-c', `setsid -f sleep ${marker}; sleep ${marker} & touch started; wait`],
    };
    const worker = spawn(
      process.execPath,
      ['--import', 'tsx', runner, JSON.stringify({ workspace: workspace.root, options, args })],
      { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } },
    );
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    await expect.poll(() => existsSync(started), { timeout: 30_000, interval: 50 }).toBe(true);
    expect(processesWith(marker).length).toBeGreaterThanOrEqual(4);
    worker.kill('SIGKILL');
    await exited;
    // The kernel ends the sandbox when its parent dies; that takes a moment, not a call to finish.
    await expect.poll(() => processesWith(marker), { timeout: 5_000, interval: 25 }).toEqual([]);
  });
});
