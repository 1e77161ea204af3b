import { execFileSync } from 'node:child_process';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  stat,
  utimes,
  writeFile,
  symlink,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunWorkspaces } from '../../src/tools/run-workspaces.js';

const temporary = (prefix: string) => mkdtemp(path.join(tmpdir(), prefix));

describe('RunWorkspaces', () => {
  it('names a run’s directory safely: no dot first, no separators, bounded, different for different ids', () => {
    const names = ['../../etc', '.hidden', 'a/b', 'a_b', 'x'.repeat(2_000), 'ünïcode'].map((id) =>
      RunWorkspaces.directoryName(id),
    );
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(name.length).toBeLessThanOrEqual(117);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(RunWorkspaces.directoryName('a/b')).not.toBe(RunWorkspaces.directoryName('a_b'));
  });

  it('makes a run’s workspace once, from a copy of the seed, and gives the same one again', async () => {
    const seed = await temporary('keel-seed-');
    await mkdir(path.join(seed, 'src'));
    await writeFile(path.join(seed, 'src', 'app.ts'), 'export {};\n');
    await symlink('src/app.ts', path.join(seed, 'link'));
    const workspaces = await RunWorkspaces.open({
      root: path.join(await temporary('keel-runs-'), 'nested'),
      seed: { kind: 'directory', path: seed },
      retentionSeconds: 0,
    });
    const first = await workspaces.forRun('run-1');
    expect(first.root).toBe(workspaces.directoryOf('run-1'));
    expect(await readFile(path.join(first.root, 'src', 'app.ts'), 'utf8')).toBe('export {};\n');
    expect(await readlink(path.join(first.root, 'link'))).toBe('src/app.ts');
    await writeFile(path.join(first.root, 'mine.txt'), 'kept');
    expect(await workspaces.forRun('run-1')).toBe(first);
    // Another worker sharing the root finds the same workspace, not a fresh copy.
    const other = await RunWorkspaces.open({
      root: workspaces.root,
      seed: { kind: 'empty' },
      retentionSeconds: 0,
    });
    expect(await readFile(path.join((await other.forRun('run-1')).root, 'mine.txt'), 'utf8')).toBe('kept');
    expect((await readdir(workspaces.root)).sort()).toEqual(['.keel', RunWorkspaces.directoryName('run-1')]);
  });

  it('clones a git repository into a new workspace', async () => {
    const repository = await temporary('keel-repo-');
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repository,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      });
    git('init', '--quiet');
    await writeFile(path.join(repository, 'README.md'), '# app\n');
    git('add', 'README.md');
    git('commit', '--quiet', '-m', 'first');
    const workspaces = await RunWorkspaces.open({
      root: await temporary('keel-runs-'),
      seed: { kind: 'git', url: repository },
      retentionSeconds: 0,
    });
    const workspace = await workspaces.forRun('run-git');
    expect(await readFile(path.join(workspace.root, 'README.md'), 'utf8')).toBe('# app\n');
    // The clone's .git is protected like any workspace's.
    expect(workspace.protection.protecting('.git/config')).toBeDefined();
  });

  it('fails clearly when the clone fails, and leaves nothing behind', async () => {
    const workspaces = await RunWorkspaces.open({
      root: await temporary('keel-runs-'),
      seed: { kind: 'git', url: path.join(tmpdir(), 'keel-no-such-repository') },
      retentionSeconds: 0,
    });
    await expect(workspaces.forRun('run-x')).rejects.toThrow(/git clone of the workspace seed failed/);
    expect(await readdir(workspaces.root)).toEqual(['.keel']);
    expect(await readdir(path.join(workspaces.root, '.keel', 'creating'))).toEqual([]);
  });

  it('sweeps only ended runs past the retention period, and makes a swept workspace again on use', async () => {
    const workspaces = await RunWorkspaces.open({
      root: await temporary('keel-runs-'),
      retentionSeconds: 3_600,
    });
    for (const id of ['ended-old', 'ended-recent', 'open-old']) await workspaces.forRun(id);
    const long = new Date(Date.now() - 7_200_000);
    for (const id of ['ended-old', 'open-old']) {
      const record = path.join(workspaces.root, '.keel', 'runs', `${RunWorkspaces.directoryName(id)}.json`);
      await utimes(record, long, long);
    }
    const asked: string[] = [];
    const removed = await workspaces.sweep((id) => {
      asked.push(id);
      return Promise.resolve(id.startsWith('open'));
    });
    expect(removed).toEqual(['ended-old']);
    expect(asked.sort()).toEqual(['ended-old', 'open-old']);
    await expect(stat(workspaces.directoryOf('ended-old'))).rejects.toThrow(/ENOENT/);
    expect((await stat(workspaces.directoryOf('ended-recent'))).isDirectory()).toBe(true);
    expect((await stat(workspaces.directoryOf('open-old'))).isDirectory()).toBe(true);
    // A late call of the swept run gets a new, empty workspace rather than a missing directory.
    const again = await workspaces.forRun('ended-old');
    expect(await readdir(again.root)).toEqual([]);
  });
});
