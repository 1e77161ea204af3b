import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { outcome, runCommandCall } from '../../support/run-command-call.js';

/**
 * A command in the sandbox sees the workspace read-write, but the protected entries that exist when
 * it starts (`.git`, `.keel`, the git directory a `.git` file names) read-only: git runs what
 * `.git/config` and hooks name at a human's next `git status`, and `.keel` holds the run data.
 * Layout: <base>/ws is the workspace, <base>/outside a directory beside it.
 */
let base: string;
let root: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-protect-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, '.git', 'hooks'), { recursive: true });
  await writeFile(path.join(root, '.git', 'config'), '[core]\n\tbare = false\n');
  await writeFile(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await mkdir(path.join(root, '.keel'));
  await writeFile(path.join(root, '.keel', 'runs.db'), 'run data');
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'outside-secret');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs `script` with sh in the workspace opened with `protect` (the defaults when absent). */
async function sh(script: string, protect?: string[]): Promise<Observation> {
  const workspace = await Workspace.open(root, protect === undefined ? {} : { protect });
  return runCommandCall(workspace, { program: 'sh', args: ['-c', script] }, { allow: ['sh'] });
}

function text(observation: Observation): string {
  expect(observation).toMatchObject({ ok: true });
  return outcome(observation).text;
}

const config = (): string => readFileSync(path.join(root, '.git', 'config'), 'utf8');

describe('run_command protected paths', () => {
  const attacks = [
    'echo "[core] fsmonitor = touch pwned" >> .git/config',
    'printf "#!/bin/sh\\ntouch pwned\\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit',
    'rm -rf .keel',
    'rm -f .keel/runs.db',
    'mv .git moved',
    'mv .keel moved',
    'rm -rf .git',
    'ln -s /tmp .git/evil',
  ];
  it.each(attacks)('cannot change .git or .keel: %s', async (attack) => {
    const before = config();
    expect(text(await sh(attack))).toMatch(/Read-only file system|Device or resource busy/);
    expect(config()).toBe(before);
    expect(existsSync(path.join(root, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(path.join(root, '.git', 'evil'))).toBe(false);
    expect(await readFile(path.join(root, '.keel', 'runs.db'), 'utf8')).toBe('run data');
    expect(existsSync(path.join(root, 'moved'))).toBe(false);
  });

  it('still writes elsewhere in the workspace, and reads .git', async () => {
    expect(text(await sh('echo inside > made.txt && cat .git/HEAD'))).toMatch(
      /^exit code: 0\nstdout:\nref: refs\/heads\/main\n/,
    );
    expect(await readFile(path.join(root, 'made.txt'), 'utf8')).toBe('inside\n');
  });

  it.skipIf(!hasGit)('cannot set core.fsmonitor with git itself', async () => {
    execFileSync('git', ['init', '-q', root]);
    const before = config();
    const workspace = await Workspace.open(root);
    const observation = await runCommandCall(
      workspace,
      { program: 'git', args: ['config', 'core.fsmonitor', 'touch pwned'] },
      { allow: ['git'] },
    );
    expect(text(observation)).toMatch(/^exit code: [1-9]/);
    expect(config()).toBe(before);
    expect(config()).not.toContain('fsmonitor');
    // Reading the repository works as before.
    const status = await runCommandCall(workspace, { program: 'git', args: ['status'] }, { allow: ['git'] });
    expect(text(status)).toMatch(/^exit code: 0\n/);
  });

  it('protects a workspace whose path has spaces, tabs and backslashes', async () => {
    const odd = path.join(base, 'w s\tx\\y');
    await mkdir(path.join(odd, '.git'), { recursive: true });
    await writeFile(path.join(odd, '.git', 'config'), '[core]\n');
    const workspace = await Workspace.open(odd);
    const observation = await runCommandCall(
      workspace,
      { program: 'sh', args: ['-c', 'echo x >> .git/config; echo y > made.txt'] },
      { allow: ['sh'] },
    );
    expect(text(observation)).toContain('Read-only file system');
    expect(readFileSync(path.join(odd, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(path.join(odd, 'made.txt'), 'utf8')).toBe('y\n');
  });

  it('moves aside a protected entry a command creates where none was, whole, and says so', async () => {
    await rm(path.join(root, '.git'), { recursive: true });
    await rm(path.join(root, '.keel'), { recursive: true });
    const result = outcome(
      await sh(
        'mkdir -p .git/hooks && printf "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n" > .git/config && ' +
          `ln -s ${JSON.stringify(path.join(base, 'outside'))} .keel && mkdir -p .GIT. ; echo made`,
      ),
    );
    expect(result.text).toContain('made');
    expect(result.text).toMatch(
      /note: ".git" appeared at the workspace root while it ran, which is protected by the worker \(pattern ".git"\); it was moved to "keel-set-aside-[0-9a-f]{8}-\.git"/u,
    );
    expect(result.text).toContain('note: ".keel" appeared');
    expect(result.text).toContain('note: ".GIT." appeared');
    const names = (await readdir(root)).sort();
    expect(names).toHaveLength(3);
    expect(names.every((name) => name.startsWith('keel-set-aside-'))).toBe(true);
    // Set aside whole: the planted config is still there to look at, under a name git never reads.
    const gitAside = names.find((name) => name.endsWith('-.git'))!;
    expect(readFileSync(path.join(root, gitAside, 'config'), 'utf8')).toContain('fsmonitor');
    // The link was moved, never what it leads to.
    expect(readFileSync(path.join(base, 'outside', 'secret.txt'), 'utf8')).toBe('outside-secret');
  });

  it('lets a command write .git when the operator does not protect it', async () => {
    expect(text(await sh('echo "# one" >> .git/config', []))).toMatch(/^exit code: 0\n/);
    expect(config()).toContain('# one');
    // Only .keel protected: .git is writable, .keel not.
    expect(text(await sh('echo "# two" >> .git/config; rm -rf .keel', ['.keel']))).toMatch(
      /^exit code: 1\n[\s\S]*Read-only file system/,
    );
    expect(config()).toContain('# two');
    expect(existsSync(path.join(root, '.keel', 'runs.db'))).toBe(true);
  });

  it('keeps a .git file and the git directory it names read-only', async () => {
    await rm(path.join(root, '.git'), { recursive: true });
    await mkdir(path.join(root, 'repo.git', 'hooks'), { recursive: true });
    await writeFile(path.join(root, 'repo.git', 'config'), '[core]\n');
    await writeFile(path.join(root, '.git'), 'gitdir: repo.git\n');
    const attacks = [
      'echo "gitdir: evil" > .git',
      'rm -f .git',
      'echo "[core] fsmonitor = touch pwned" >> repo.git/config',
      'echo evil > repo.git/hooks/pre-commit',
      'mv repo.git elsewhere',
    ];
    for (const attack of attacks) {
      expect(text(await sh(attack)), attack).toMatch(/Read-only file system|Device or resource busy/);
    }
    expect(readFileSync(path.join(root, '.git'), 'utf8')).toBe('gitdir: repo.git\n');
    expect(readFileSync(path.join(root, 'repo.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(path.join(root, 'repo.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('never shows a host directory that .git links to', async () => {
    await rm(path.join(root, '.git'), { recursive: true });
    await symlink('../outside', path.join(root, '.git'));
    const output = text(await sh('cat .git/secret.txt; ls -a .git/; echo x > .git/planted'));
    expect(output).not.toContain('outside-secret');
    expect(output).not.toContain('secret.txt\n');
    expect(existsSync(path.join(base, 'outside', 'planted'))).toBe(false);
  });

  it('refuses to run when more entries are protected than the sandbox can bind, naming the setting', async () => {
    const protect = ['.git', '.keel', 'a', 'b', 'c'];
    for (const name of ['a', 'b', 'c']) await mkdir(path.join(root, name));
    expect(outcome(await sh('echo ran > ran.txt', protect))).toEqual({
      ok: false,
      text:
        'run_command refused to run: the workspace holds 5 protected entries (".git", ".keel", "a", "b", ' +
        '"c") and its sandbox can keep at most 4 read-only; the operator can protect fewer top-level ' +
        'entries with KEEL_WORKSPACE_PROTECT',
    });
    expect(existsSync(path.join(root, 'ran.txt'))).toBe(false);
    // Four fit: each is read-only and the command runs.
    const four = text(
      await sh('echo ran > ran.txt; for d in .git .keel a b; do touch $d/x; done', protect.slice(0, 4)),
    );
    expect(four.match(/Read-only file system/g)).toHaveLength(4);
    expect(readFileSync(path.join(root, 'ran.txt'), 'utf8')).toBe('ran\n');
    // The git directory a .git file names counts too.
    await rm(path.join(root, '.git'), { recursive: true });
    await mkdir(path.join(root, 'repo.git'));
    await writeFile(path.join(root, '.git'), 'gitdir: repo.git\n');
    expect(outcome(await sh('echo again > ran.txt', protect.slice(0, 4)))).toEqual({
      ok: false,
      text: expect.stringContaining(
        'the workspace holds 5 protected entries (".git", ".keel", "a", "b", "repo.git")',
      ) as string,
    });
    expect(readFileSync(path.join(root, 'ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('never shows the host directory a .git swapped for a link mid-start leads to', async () => {
    // A separate process swaps .git for a relative link to the host's temporary directory (which
    // holds <base>/outside) and back, as fast as it can, while calls start: the swap lands before,
    // during or after each call's opening of .git and bubblewrap's mounts. Bound by path, the host's
    // directory would be mounted over the sandbox's private one of the same name; bound by the
    // descriptor held open, it never appears in the sandbox.
    const script = `
      const fs = require('node:fs');
      const [dotGit, held] = process.argv.slice(1);
      const pause = new Int32Array(new SharedArrayBuffer(4));
      const hold = () => Atomics.wait(pause, 0, 0, Math.random() * 2);
      for (;;) {
        try {
          hold();
          fs.renameSync(dotGit, held);
          fs.symlinkSync('../..', dotGit);
          hold();
          fs.unlinkSync(dotGit);
          fs.renameSync(held, dotGit);
        } catch {}
      }`;
    const swapper = spawn(
      process.execPath,
      ['-e', script, path.join(root, '.git'), path.join(root, 'held')],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => swapper.once('exit', resolve));
    const tally = { ran: 0, refused: 0 };
    try {
      const workspace = await Workspace.open(root);
      for (let call = 0; call < 150; call++) {
        const observation = await runCommandCall(
          workspace,
          {
            program: 'sh',
            args: ['-c', `cat ${base}/outside/secret.txt .git/*/outside/secret.txt 2>/dev/null; echo done`],
          },
          { allow: ['sh'] },
        );
        const { ok, text: shown } = outcome(observation);
        expect(shown).not.toContain('outside-secret');
        if (ok) tally.ran += 1;
        else tally.refused += 1;
      }
    } finally {
      swapper.kill('SIGKILL');
      await exited;
    }
    console.log(`protected .git race: ${JSON.stringify(tally)}`);
    expect(tally.ran).toBeGreaterThan(0);
  });
});
