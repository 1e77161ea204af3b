import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAtMost } from '../../src/tools/held-directory.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { FileTooLargeError, Workspace, WorkspaceError } from '../../src/tools/workspace.js';
import { useEscapeFixture, OUTSIDE_SECRET, swapAfterResolve } from '../support/escape-fixture.js';

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

const CHANGED = /^Path refused: ".*" changed while it was being opened/;

describe.each([
  { mode: 'descriptor paths', descriptorPaths: true },
  { mode: 'portable fallback', descriptorPaths: false },
])('Workspace file access ($mode)', ({ descriptorPaths }) => {
  const escape = useEscapeFixture('workspace-files', { descriptorPaths });
  const { inside } = escape;
  let ws: Workspace;

  beforeEach(() => {
    ws = escape.fixture.workspace;
  });

  async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
    const error: unknown = await promise.then(
      () => new Error('expected a refusal'),
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(WorkspaceError);
    return error as WorkspaceError;
  }

  it('uses the mode it was opened with', () => {
    expect(ws.descriptorPaths).toBe(descriptorPaths);
  });

  it('reads a regular file whole, with its stats', async () => {
    const { bytes, stats } = await ws.readFile('src/index.ts');
    expect(bytes.toString()).toBe('export {};\n');
    expect(stats.size).toBe(11);
  });

  it('reads through a symbolic link that stays inside', async () => {
    await symlink('notes.txt', inside('notes-link.txt'));
    expect((await ws.readFile('notes-link.txt')).bytes.toString()).toBe('notes\n');
  });

  it('refuses the root and a directory as files', async () => {
    for (const requested of ['', '.', 'src']) {
      const error = await refusal(ws.readFile(requested));
      expect(error.message).toMatch(/ is a directory; use list_directory$/);
    }
  });

  it('refuses a sparse 10 GiB file by its size without reading it', async () => {
    await writeFile(inside('huge.bin'), '');
    await truncate(inside('huge.bin'), 10 * 1024 ** 3);
    const error = await refusal(ws.readFile('huge.bin', { maxBytes: 1024, tool: 'read_file' }));
    expect(error).toBeInstanceOf(FileTooLargeError);
    expect(error.message).toBe(`huge.bin is ${10 * 1024 ** 3} bytes; read_file opens files up to 1024 bytes`);
    expect((error as FileTooLargeError).size).toBe(10 * 1024 ** 3);
    const byDefault = await refusal(ws.openFile('huge.bin'));
    expect(byDefault.message).toMatch(
      /^huge\.bin is 10737418240 bytes; files over \d+ bytes are not opened$/,
    );
  });

  it('refuses a named pipe for reading and writing, and nothing waits on it', async () => {
    escape.files.fifo(inside('pipe'));
    expect((await refusal(ws.readFile('pipe'))).message).toBe(
      'pipe is not a regular file but a named pipe; only regular files can be opened',
    );
    expect((await refusal(ws.writeFile('pipe', Buffer.from('x')))).message).toBe(
      'pipe is a named pipe, not a regular file; it was not written',
    );
    expect((await lstat(inside('pipe'))).isFIFO()).toBe(true);
  });

  it('refuses a socket for reading and writing', async () => {
    await escape.files.socket(inside('sock'));
    expect((await refusal(ws.readFile('sock'))).message).toBe(
      'sock is not a regular file but a socket; only regular files can be opened',
    );
    expect((await refusal(ws.writeFile('sock', Buffer.from('x')))).message).toBe(
      'sock is a socket, not a regular file; it was not written',
    );
  });

  it('refuses a symbolic link to /dev/zero for reading and writing', async () => {
    await symlink('/dev/zero', inside('zero'));
    for (const attempt of [() => ws.readFile('zero'), () => ws.writeFile('zero', Buffer.from('x'))]) {
      expect((await refusal(attempt())).message).toBe(
        'Path refused: "zero" goes through a symbolic link that leads outside the workspace',
      );
    }
  });

  it('refuses a character device inside the workspace for reading and writing', async (context) => {
    if (!escape.files.characterDevice(inside('zero'))) context.skip('making a device needs root');
    expect((await refusal(ws.readFile('zero'))).message).toBe(
      'zero is not a regular file but a character device; only regular files can be opened',
    );
    expect((await refusal(ws.writeFile('zero', Buffer.from('x')))).message).toBe(
      'zero is a character device, not a regular file; it was not written',
    );
    expect((await lstat(inside('zero'))).isCharacterDevice()).toBe(true);
  });

  it('refuses the devices of a workspace rooted at /dev', async () => {
    const devices = await Workspace.open('/dev', { descriptorPaths });
    for (const name of ['zero', 'null', 'urandom']) {
      expect((await refusal(devices.readFile(name))).message).toBe(
        `${name} is not a regular file but a character device; only regular files can be opened`,
      );
    }
  });

  it('lists a directory and refuses to list a file', async () => {
    expect((await ws.readDirectory('src')).map((entry) => entry.name)).toEqual(['index.ts']);
    expect((await refusal(ws.readDirectory('notes.txt'))).message).toBe('notes.txt is not a directory');
  });

  describe('when a path is swapped for a symbolic link after it was checked', () => {
    it('refuses to read through a parent directory that now leads outside', async () => {
      await mkdir(inside('dir'));
      await writeFile(inside('dir', 'secret.txt'), 'inside');
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await rename(inside('dir'), inside('dir-before'));
        await symlink(escape.fixture.outside, inside('dir'));
      });
      expect((await refusal(ws.readFile('dir/secret.txt'))).message).toMatch(CHANGED);
      expect((await lstat(inside('dir'))).isSymbolicLink()).toBe(true);
      await unchanged();
    });

    it('refuses to read when a grandparent now leads outside', async () => {
      await mkdir(inside('a', 'dir'), { recursive: true });
      await writeFile(inside('a', 'dir', 'secret.txt'), 'inside');
      await mkdir(path.join(escape.fixture.outside, 'a', 'dir'), { recursive: true });
      await writeFile(path.join(escape.fixture.outside, 'a', 'dir', 'secret.txt'), 'OUTSIDE');
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await rename(inside('a'), inside('a-before'));
        await symlink(path.join(escape.fixture.outside, 'a'), inside('a'));
      });
      expect((await refusal(ws.readFile('a/dir/secret.txt'))).message).toMatch(CHANGED);
      await unchanged();
    });

    it('refuses to read a file that is now a link to a file outside', async () => {
      await writeFile(inside('file.txt'), 'inside');
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await rm(inside('file.txt'));
        await symlink(path.join(escape.fixture.outside, 'secret.txt'), inside('file.txt'));
      });
      expect((await refusal(ws.readFile('file.txt'))).message).toMatch(CHANGED);
      await unchanged();
    });

    it('refuses to list a directory that now leads outside', async () => {
      await mkdir(inside('dir'));
      swapAfterResolve(ws, async () => {
        await rename(inside('dir'), inside('dir-before'));
        await symlink(escape.fixture.outside, inside('dir'));
      });
      expect((await refusal(ws.readDirectory('dir'))).message).toMatch(CHANGED);
    });

    it('refuses to list when a parent now leads outside', async () => {
      await mkdir(inside('a', 'dir'), { recursive: true });
      await mkdir(path.join(escape.fixture.outside, 'a', 'dir'), { recursive: true });
      swapAfterResolve(ws, async () => {
        await rename(inside('a'), inside('a-before'));
        await symlink(path.join(escape.fixture.outside, 'a'), inside('a'));
      });
      expect((await refusal(ws.readDirectory('a/dir'))).message).toMatch(CHANGED);
    });

    it.each(['secret.txt', 'new.txt'])(
      'refuses to write %s into a parent directory that now leads outside',
      async (name) => {
        await mkdir(inside('dir'));
        const unchanged = await escape.fixture.watchOutside();
        swapAfterResolve(ws, async () => {
          await rename(inside('dir'), inside('dir-before'));
          await symlink(escape.fixture.outside, inside('dir'));
        });
        expect((await refusal(ws.writeFile(`dir/${name}`, Buffer.from('pwned')))).message).toMatch(CHANGED);
        await unchanged();
      },
    );

    it('refuses to write when a grandparent now leads outside', async () => {
      await mkdir(inside('a', 'dir'), { recursive: true });
      await mkdir(path.join(escape.fixture.outside, 'a', 'dir'), { recursive: true });
      await writeFile(path.join(escape.fixture.outside, 'a', 'dir', 'secret.txt'), 'OUTSIDE');
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await rename(inside('a'), inside('a-before'));
        await symlink(path.join(escape.fixture.outside, 'a'), inside('a'));
      });
      expect((await refusal(ws.writeFile('a/dir/secret.txt', Buffer.from('pwned')))).message).toMatch(
        CHANGED,
      );
      await unchanged();
    });

    it('refuses to write over a file that is now a link, leaving the link and its target alone', async () => {
      await writeFile(inside('file.txt'), 'inside');
      const target = path.join(escape.fixture.outside, 'secret.txt');
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await rm(inside('file.txt'));
        await symlink(target, inside('file.txt'));
      });
      expect((await refusal(ws.writeFile('file.txt', Buffer.from('pwned')))).message).toMatch(CHANGED);
      await expect(readFile(target, 'utf8')).resolves.toBe(OUTSIDE_SECRET);
      expect((await lstat(inside('file.txt'))).isSymbolicLink()).toBe(true);
      await unchanged();
    });

    it('refuses to create directories through one that is now a link to outside', async () => {
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(ws, async () => {
        await symlink(escape.fixture.outside, inside('new'));
      });
      const attempt = ws.writeFile('new/deeper/file.txt', Buffer.from('pwned'), { createDirectories: true });
      expect((await refusal(attempt)).message).toMatch(CHANGED);
      await unchanged();
    });
  });

  describe('a held directory', () => {
    it('lists, reads and descends through itself, or refuses, once its path leads outside', async () => {
      await mkdir(inside('dir', 'sub'), { recursive: true });
      await writeFile(inside('dir', 'secret.txt'), 'inside');
      await mkdir(path.join(escape.fixture.outside, 'sub'), { recursive: true });
      const unchanged = await escape.fixture.watchOutside();
      const directory = await ws.openDirectory('dir');
      try {
        await rename(inside('dir'), inside('dir-before'));
        await symlink(escape.fixture.outside, inside('dir'));
        if (descriptorPaths) {
          expect((await directory.entries()).map((entry) => entry.name).sort()).toEqual([
            'secret.txt',
            'sub',
          ]);
          expect((await directory.readFile('secret.txt')).bytes.toString()).toBe('inside');
          const sub = await directory.openDirectory('sub');
          await expect(sub.entries()).resolves.toEqual([]);
          await sub.close();
        } else {
          expect((await refusal(directory.entries())).message).toMatch(CHANGED);
          expect((await refusal(directory.readFile('secret.txt'))).message).toMatch(CHANGED);
          expect((await refusal(directory.openDirectory('sub'))).message).toMatch(CHANGED);
        }
      } finally {
        await directory.close();
      }
      await unchanged();
    });

    it('refuses entry names that are not plain names', async () => {
      const directory = await ws.openDirectory('.');
      try {
        for (const name of ['', '.', '..', '../outside', 'src/index.ts', 'a\0b']) {
          expect((await refusal(directory.readFile(name))).message).toBe(
            `Not an entry name: ${JSON.stringify(name)}`,
          );
        }
      } finally {
        await directory.close();
      }
    });

    it('names entries by their path in the workspace', async () => {
      const directory = await ws.openDirectory('src/../src');
      try {
        expect(directory.relativePath).toBe('src');
        const refusedDirectory = await refusal(directory.openDirectory('index.ts'));
        expect(refusedDirectory.message).toBe('src/index.ts is not a directory');
      } finally {
        await directory.close();
      }
    });
  });

  describe('writeFile', () => {
    it('creates a file, then replaces it, saying which', async () => {
      await expect(ws.writeFile('new.txt', Buffer.from('one'))).resolves.toEqual({ created: true });
      await expect(ws.writeFile('new.txt', Buffer.from('two'))).resolves.toEqual({ created: false });
      await expect(readFile(inside('new.txt'), 'utf8')).resolves.toBe('two');
    });

    it('keeps the permissions of a file it replaces', async () => {
      await writeFile(inside('run.sh'), '#!/bin/sh\n');
      await chmod(inside('run.sh'), 0o750);
      await ws.writeFile('run.sh', Buffer.from('#!/bin/sh\necho hi\n'));
      expect((await stat(inside('run.sh'))).mode & 0o777).toBe(0o750);
    });

    it('replaces the file as a whole: a handle open on the old file still reads the old content', async () => {
      const old = await open(inside('notes.txt'), 'r');
      try {
        await ws.writeFile('notes.txt', Buffer.from('new notes\n'));
        expect((await old.readFile()).toString()).toBe('notes\n');
      } finally {
        await old.close();
      }
      await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('new notes\n');
    });

    it('leaves no temporary file behind, after a write or a refusal', async () => {
      await ws.writeFile('src/a.ts', Buffer.from('a'));
      await refusal(ws.writeFile('src/a.ts', Buffer.from('b'), { overwrite: false }));
      const aborted = new AbortController();
      aborted.abort(new Error('stop'));
      await expect(ws.writeFile('src/b.ts', Buffer.from('b'), { signal: aborted.signal })).rejects.toThrow(
        'stop',
      );
      expect((await readdir(inside('src'))).sort()).toEqual(['a.ts', 'index.ts']);
    });

    it('replaces a hard link to a file outside without changing that file', async () => {
      await link(path.join(escape.fixture.outside, 'secret.txt'), inside('hard.txt'));
      const unchanged = await escape.fixture.watchOutside();
      await ws.writeFile('hard.txt', Buffer.from('replaced'));
      await expect(readFile(inside('hard.txt'), 'utf8')).resolves.toBe('replaced');
      await unchanged();
    });

    it('refuses to replace an existing file when overwrite is false', async () => {
      expect((await refusal(ws.writeFile('notes.txt', Buffer.from('x'), { overwrite: false }))).message).toBe(
        'notes.txt already exists; set overwrite to true to replace it',
      );
      await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('notes\n');
      await expect(ws.writeFile('fresh.txt', Buffer.from('x'), { overwrite: false })).resolves.toEqual({
        created: true,
      });
    });

    it('refuses a directory, the root, and paths that end in a directory part', async () => {
      expect((await refusal(ws.writeFile('src', Buffer.from('x')))).message).toBe(
        'src is a directory; give the path of a file',
      );
      for (const requested of ['', '.', 'src/', 'src/.', 'src/..', 'new/']) {
        expect((await refusal(ws.writeFile(requested, Buffer.from('x')))).message).toBe(
          `${JSON.stringify(requested)} names a directory; give the path of a file`,
        );
      }
      expect((await stat(inside('src'))).isDirectory()).toBe(true);
    });

    it('refuses to write through any symbolic link, even one inside, naming the real path', async () => {
      await symlink('notes.txt', inside('notes-link.txt'));
      await symlink('src', inside('source'));
      expect((await refusal(ws.writeFile('notes-link.txt', Buffer.from('x')))).message).toBe(
        'Path refused: "notes-link.txt" goes through a symbolic link and files are not written through ' +
          'links; the real path is "notes.txt", write there if you mean it',
      );
      expect((await refusal(ws.writeFile('source/new.ts', Buffer.from('x')))).message).toMatch(
        /the real path is "src\/new\.ts"/,
      );
      await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('notes\n');
      expect((await lstat(inside('notes-link.txt'))).isSymbolicLink()).toBe(true);
    });

    it('refuses a dangling link to outside and creates nothing there', async () => {
      await symlink(path.join(escape.fixture.outside, 'created.txt'), inside('dangling.txt'));
      const unchanged = await escape.fixture.watchOutside();
      expect((await refusal(ws.writeFile('dangling.txt', Buffer.from('x')))).message).toMatch(
        /goes through a symbolic link whose target does not exist/,
      );
      await unchanged();
    });

    it('needs createDirectories for a missing parent, and creates every level when asked', async () => {
      expect((await refusal(ws.writeFile('a/b/c.txt', Buffer.from('x')))).message).toBe(
        'No such directory: a/b; set createDirectories to true to create it',
      );
      await ws.writeFile('a/b/c.txt', Buffer.from('x'), { createDirectories: true });
      await expect(readFile(inside('a', 'b', 'c.txt'), 'utf8')).resolves.toBe('x');
    });

    it('refuses to create a directory where a file is', async () => {
      expect(
        (await refusal(ws.writeFile('notes.txt/x.txt', Buffer.from('x'), { createDirectories: true })))
          .message,
      ).toBe('Not a directory: a parent of notes.txt/x.txt is a file');
    });

    it('refuses when the file changed after the stats it was given', async () => {
      const { stats } = await ws.readFile('notes.txt');
      await writeFile(inside('notes.txt'), 'changed meanwhile');
      expect(
        (await refusal(ws.writeFile('notes.txt', Buffer.from('x'), { unchangedSince: stats }))).message,
      ).toBe('notes.txt changed while it was being edited; read it again');
      await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('changed meanwhile');
    });
  });
});

describe('readAtMost', () => {
  it('stops past the limit even when the file holds more than its size said', async () => {
    const file = path.join(base, 'ten.txt');
    await writeFile(file, '0123456789');
    const handle = await open(file, 'r');
    try {
      await expect(readAtMost(handle, 5, 0)).resolves.toBeUndefined();
    } finally {
      await handle.close();
    }
    const again = await open(file, 'r');
    try {
      expect((await readAtMost(again, 10, 0))?.toString()).toBe('0123456789');
    } finally {
      await again.close();
    }
  });
});
