import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/tools/tool-error.js';
import { Workspace, WorkspaceError } from '../../src/tools/workspace.js';

/**
 * Layout of every test:
 *   <base>/ws/               the workspace
 *   <base>/ws/notes.txt
 *   <base>/ws/src/index.ts
 *   <base>/ws-sibling/x.txt  shares the workspace's name as a prefix
 *   <base>/outside/secret.txt
 */
let base: string;
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-workspace-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await writeFile(path.join(root, 'notes.txt'), 'notes');
  await writeFile(path.join(root, 'src', 'index.ts'), 'export {};');
  await mkdir(path.join(base, 'ws-sibling'));
  await writeFile(path.join(base, 'ws-sibling', 'x.txt'), 'sibling');
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'secret');
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WorkspaceError);
    return error as WorkspaceError;
  }
  throw new Error('expected the path to be refused');
}

describe('Workspace', () => {
  it('opens an existing directory with its real path as the root', async () => {
    await symlink(root, path.join(base, 'link-to-ws'));
    const throughLink = await Workspace.open(path.join(base, 'link-to-ws'));
    expect(throughLink.root).toBe(root);
    expect(workspace.root).toBe(root);
  });

  it('refuses to open a missing directory or a file', async () => {
    await expect(Workspace.open(path.join(base, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(Workspace.open(path.join(root, 'notes.txt'))).rejects.toThrow(/is not a directory/);
  });

  it('resolves the root for an empty path and for "."', async () => {
    await expect(workspace.resolve('')).resolves.toBe(root);
    await expect(workspace.resolve('.')).resolves.toBe(root);
    await expect(workspace.resolve('./')).resolves.toBe(root);
  });

  it('resolves relative paths inside the workspace, including ones that go up and come back', async () => {
    await expect(workspace.resolve('notes.txt')).resolves.toBe(path.join(root, 'notes.txt'));
    await expect(workspace.resolve('src/index.ts')).resolves.toBe(path.join(root, 'src', 'index.ts'));
    await expect(workspace.resolve('src/../notes.txt')).resolves.toBe(path.join(root, 'notes.txt'));
    await expect(workspace.resolve('./src//index.ts')).resolves.toBe(path.join(root, 'src', 'index.ts'));
  });

  it.each([
    '..',
    '../',
    '../outside/secret.txt',
    'a/../../outside/secret.txt',
    './../x',
    'src/../../x',
    '..//x',
  ])('refuses %j, which leads outside', async (requested) => {
    const error = await refusal(workspace.resolve(requested));
    expect(error.message).toBe(`Path refused: ${JSON.stringify(requested)} leads outside the workspace`);
  });

  it('refuses a path into a sibling directory whose name starts with the workspace name', async () => {
    const error = await refusal(workspace.resolve('../ws-sibling/x.txt'));
    expect(error.message).toMatch(/leads outside the workspace/);
  });

  it('refuses a path that leaves even when the rest does not exist and mustExist is false', async () => {
    const error = await refusal(workspace.resolve('new/../../outside/new.txt', { mustExist: false }));
    expect(error.message).toMatch(/leads outside the workspace/);
  });

  it('refuses absolute paths, even one that points inside the workspace', async () => {
    for (const requested of ['/etc/passwd', path.join(root, 'notes.txt'), '/']) {
      const error = await refusal(workspace.resolve(requested));
      expect(error.message).toBe(
        `Path refused: ${JSON.stringify(requested)} is absolute; give a path relative to the workspace root`,
      );
    }
  });

  it('refuses Windows-style absolute paths', async () => {
    for (const requested of ['C:\\Windows\\system.ini', 'c:/Users/x', '\\\\server\\share\\file']) {
      const error = await refusal(workspace.resolve(requested));
      expect(error.message).toMatch(/is absolute/);
    }
  });

  it('refuses a path with a NUL byte', async () => {
    const error = await refusal(workspace.resolve('notes.txt\0.png'));
    expect(error.message).toBe('Path refused: it contains a NUL byte');
  });

  it('refuses a symbolic link to a directory outside, and paths through it', async () => {
    await symlink(path.join(base, 'outside'), path.join(root, 'escape'));
    for (const requested of ['escape', 'escape/secret.txt']) {
      const error = await refusal(workspace.resolve(requested));
      expect(error.message).toBe(
        `Path refused: ${JSON.stringify(requested)} goes through a symbolic link that leads outside the workspace`,
      );
    }
  });

  it('refuses a symbolic link to a file outside', async () => {
    await symlink(path.join(base, 'outside', 'secret.txt'), path.join(root, 'secret-link.txt'));
    const error = await refusal(workspace.resolve('secret-link.txt'));
    expect(error.message).toMatch(/goes through a symbolic link that leads outside/);
  });

  it('refuses a symbolic link to a sibling directory whose name starts with the workspace name', async () => {
    await symlink(path.join(base, 'ws-sibling'), path.join(root, 'sibling'));
    const error = await refusal(workspace.resolve('sibling/x.txt'));
    expect(error.message).toMatch(/goes through a symbolic link that leads outside/);
  });

  it('refuses a symbolic link whose target is another link inside that leads outside', async () => {
    await symlink(path.join(base, 'outside', 'secret.txt'), path.join(root, 'second'));
    await symlink('second', path.join(root, 'first'));
    const error = await refusal(workspace.resolve('first'));
    expect(error.message).toMatch(/goes through a symbolic link that leads outside/);
  });

  it('allows a symbolic link that stays inside, resolving it to its target', async () => {
    await symlink('src', path.join(root, 'source'));
    await symlink(path.join(root, 'notes.txt'), path.join(root, 'notes-link.txt'));
    await expect(workspace.resolve('source/index.ts')).resolves.toBe(path.join(root, 'src', 'index.ts'));
    await expect(workspace.resolve('notes-link.txt')).resolves.toBe(path.join(root, 'notes.txt'));
  });

  it('refuses a missing path when it must exist', async () => {
    const error = await refusal(workspace.resolve('missing/file.txt'));
    expect(error.message).toBe('No such file or directory: missing/file.txt');
  });

  it('allows a missing path inside when it need not exist', async () => {
    await expect(workspace.resolve('new.txt', { mustExist: false })).resolves.toBe(
      path.join(root, 'new.txt'),
    );
    await expect(workspace.resolve('src/deep/new/file.txt', { mustExist: false })).resolves.toBe(
      path.join(root, 'src', 'deep', 'new', 'file.txt'),
    );
  });

  it('maps a missing path under an inside symbolic link to the link target', async () => {
    await symlink('src', path.join(root, 'source'));
    await expect(workspace.resolve('source/new.txt', { mustExist: false })).resolves.toBe(
      path.join(root, 'src', 'new.txt'),
    );
  });

  it('refuses a missing path under a symbolic link that leads outside, even when it need not exist', async () => {
    await symlink(path.join(base, 'outside'), path.join(root, 'escape'));
    const error = await refusal(workspace.resolve('escape/new.txt', { mustExist: false }));
    expect(error.message).toMatch(/goes through a symbolic link that leads outside/);
  });

  it('refuses a dangling symbolic link that points outside, even when the path need not exist', async () => {
    // Writing to the returned path would follow the link and create <base>/outside/created.txt.
    await symlink(path.join(base, 'outside', 'created.txt'), path.join(root, 'dangling.txt'));
    await refusal(workspace.resolve('dangling.txt', { mustExist: false }));
  });

  it('refuses a path through a dangling symbolic link to a missing directory outside', async () => {
    await symlink(path.join(base, 'outside', 'missing-dir'), path.join(root, 'dangling-dir'));
    await refusal(workspace.resolve('dangling-dir/created.txt', { mustExist: false }));
  });

  it('refuses a dangling symbolic link when the path must exist', async () => {
    await symlink(path.join(base, 'outside', 'created.txt'), path.join(root, 'dangling.txt'));
    await refusal(workspace.resolve('dangling.txt'));
  });

  it('lets a symbolic link loop fail with ELOOP, for the executor to explain', async () => {
    await symlink('loop-b', path.join(root, 'loop-a'));
    await symlink('loop-a', path.join(root, 'loop-b'));
    await expect(workspace.resolve('loop-a')).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('refuses a path that treats a file as a directory', async () => {
    for (const mustExist of [true, false]) {
      const error = await refusal(workspace.resolve('notes.txt/child', { mustExist }));
      expect(error.message).toBe('Not a directory: a parent of notes.txt/child is a file');
    }
  });

  it('refuses with errors the model may read', async () => {
    const error = await refusal(workspace.resolve('../x'));
    expect(error).toBeInstanceOf(ToolError);
    expect(error.name).toBe('WorkspaceError');
  });

  it('gives the workspace-relative form of an absolute path, "." for the root', () => {
    expect(workspace.relative(root)).toBe('.');
    expect(workspace.relative(path.join(root, 'src', 'index.ts'))).toBe(path.join('src', 'index.ts'));
    expect(workspace.relative(path.join(base, 'outside'))).toBe(path.join('..', 'outside'));
  });
});
