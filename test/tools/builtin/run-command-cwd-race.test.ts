import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunCommandSandbox } from '../../../src/tools/builtin/run-command.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { outcome, runCommandCall } from '../../support/run-command-call.js';

/**
 * The cwd is checked, then used: a directory swapped for a symbolic link in between must never make
 * a command run outside the workspace. A separate process swaps `ws/sub` for links to a directory
 * beside the workspace and to /etc (which the sandbox does show) as fast as it can, while calls run
 * `pwd -P` in `sub`; every answer must be a directory of the workspace, or a refusal.
 */
let base: string;
let root: string;
let workspace: Workspace;
let swapper: ChildProcess | undefined;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-cwd-race-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'OUTSIDE'), '');
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  if (swapper?.exitCode === null) {
    const exited = new Promise((resolve) => swapper!.once('exit', resolve));
    swapper.kill('SIGKILL');
    await exited;
  }
  await rm(base, { recursive: true, force: true });
});

/**
 * Swaps `sub` for a link and back, forever. Each state lasts a random fraction of a millisecond, so
 * the swaps land anywhere in a call: before its check (refused), after it (the race), or not at all.
 */
function startSwapper(): ChildProcess {
  const script = `
    const fs = require('node:fs');
    const [sub, held, outside] = process.argv.slice(1);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const hold = () => Atomics.wait(pause, 0, 0, Math.random() * 2);
    for (let round = 0; ; round++) {
      try {
        hold();
        fs.renameSync(sub, held);
        fs.symlinkSync(round % 2 === 0 ? outside : '/etc', sub);
        hold();
        fs.unlinkSync(sub);
        fs.renameSync(held, sub);
      } catch {}
    }`;
  const args = [path.join(root, 'sub'), path.join(root, 'sub-held'), path.join(base, 'outside')];
  return spawn(process.execPath, ['-e', script, ...args], { stdio: 'ignore' });
}

/** Runs `calls` raced calls, `parallel` at a time; counts where each ran. */
async function race(sandbox: RunCommandSandbox, calls: number, parallel: number) {
  const counts = { inside: 0, outside: 0, refused: 0 };
  // The whole observation of every call that ran outside, to show how it got there.
  const outsideAt: string[] = [];
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next++ < calls) {
        const { ok, text } = outcome(
          await runCommandCall(
            workspace,
            { program: 'pwd', args: ['-P'], cwd: 'sub' },
            { allow: ['pwd'], sandbox },
          ),
        );
        if (!ok) {
          counts.refused++;
          continue;
        }
        const directory = /stdout:\n(.*)/.exec(text)?.[1] ?? '';
        if (workspace.includes(directory)) {
          counts.inside++;
        } else {
          counts.outside++;
          outsideAt.push(text);
        }
      }
    }),
  );
  console.log(`cwd race (sandbox ${sandbox}): ${JSON.stringify(counts)} in ${Date.now() - started} ms`);
  return { ...counts, outsideAt };
}

describe('run_command cwd race', () => {
  for (const [sandbox, calls] of [
    ['bwrap', 300],
    ['off', 600],
  ] as const) {
    it(`never runs a command outside the workspace while its cwd is being swapped (sandbox ${sandbox})`, async () => {
      swapper = startSwapper();
      const result = await race(sandbox, calls, 4);
      expect(result.outsideAt).toEqual([]);
      // The race was real: some calls ran, and some met a swapped directory and were refused.
      expect(result.inside).toBeGreaterThan(0);
      expect(result.inside + result.refused).toBe(calls);
    });
  }
});
