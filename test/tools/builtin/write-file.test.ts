import {
  chmod,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { createWriteFileTool, WRITE_FILE_MAX_BYTES } from '../../../src/tools/builtin/write-file.js';
import type { ToolContext } from '../../../src/tools/define-tool.js';
import { MemoryIdempotencyStore, runOnce } from '../../../src/tools/idempotency.js';
import {
  OUTSIDE_SECRET,
  swapAfterResolve,
  traversals,
  useEscapeFixture,
} from '../../support/escape-fixture.js';
import { runBuiltin } from '../../support/run-builtin.js';
import { ok, toolError } from '../../support/observations.js';

const escape = useEscapeFixture('write-file');
const { inside } = escape;

function write(args: Record<string, unknown>): Promise<Observation> {
  return runBuiltin(escape.fixture.workspace, 'write_file', args);
}

describe('writeFile', () => {
  it('is a tool named write_file that has side effects', () => {
    expect(createWriteFileTool(escape.fixture.workspace)).toMatchObject({
      name: 'write_file',
      readOnly: false,
      timeoutSeconds: 30,
    });
  });

  it('creates a file and says how many bytes it wrote', async () => {
    expect(await write({ path: 'new.txt', content: 'hello' })).toEqual(
      ok('Created new.txt (5 bytes written)'),
    );
    await expect(readFile(inside('new.txt'), 'utf8')).resolves.toBe('hello');
  });

  it('replaces an existing file by default, counting UTF-8 bytes', async () => {
    expect(await write({ path: 'notes.txt', content: 'café', overwrite: null })).toEqual(
      ok('Replaced notes.txt (5 bytes written)'),
    );
    await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('café');
  });

  it('writes an empty file', async () => {
    expect(await write({ path: 'empty.txt', content: '' })).toEqual(
      ok('Created empty.txt (0 bytes written)'),
    );
    expect((await stat(inside('empty.txt'))).size).toBe(0);
  });

  it('refuses to replace a file when overwrite is false, and creates one that is missing', async () => {
    expect(await write({ path: 'notes.txt', content: 'x', overwrite: false })).toEqual(
      toolError('notes.txt already exists; set overwrite to true to replace it'),
    );
    await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('notes\n');
    expect(await write({ path: 'fresh.txt', content: 'x', overwrite: false })).toEqual(
      ok('Created fresh.txt (1 byte written)'),
    );
  });

  it('answers a retry of a create-only write as the first attempt did, instead of "already exists"', async () => {
    const store = new MemoryIdempotencyStore();
    const context: ToolContext = {
      signal: new AbortController().signal,
      callId: 'call_1',
      idempotencyKey: 'run:call_1',
      heartbeat: () => undefined,
      once: (step, effect) => runOnce(store, `run:call_1:${step}`, effect),
    };
    const writeFileTool = createWriteFileTool(escape.fixture.workspace);
    const input = { path: 'once.txt', content: 'x', createDirectories: false, overwrite: false };
    await expect(Promise.resolve(writeFileTool.execute(input, context))).resolves.toBe(
      'Created once.txt (1 byte written)',
    );
    await expect(Promise.resolve(writeFileTool.execute(input, context))).resolves.toBe(
      'Created once.txt (1 byte written)',
    );
  });

  it('needs createDirectories for a missing parent, and creates the parents when asked', async () => {
    expect(await write({ path: 'a/b/c.txt', content: 'x' })).toEqual(
      toolError('No such directory: a/b; set createDirectories to true to create it'),
    );
    expect(await write({ path: 'a/b/c.txt', content: 'x', createDirectories: true })).toEqual(
      ok('Created a/b/c.txt (1 byte written)'),
    );
    await expect(readFile(inside('a', 'b', 'c.txt'), 'utf8')).resolves.toBe('x');
  });

  it('refuses content over WRITE_FILE_MAX_BYTES and writes nothing', async () => {
    expect(await write({ path: 'big.txt', content: 'a'.repeat(WRITE_FILE_MAX_BYTES + 1) })).toEqual(
      toolError(
        `content is ${WRITE_FILE_MAX_BYTES + 1} bytes; write_file writes at most ${WRITE_FILE_MAX_BYTES} bytes`,
      ),
    );
    await expect(stat(inside('big.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a directory and a path ending in "/"', async () => {
    expect(await write({ path: 'src', content: 'x' })).toEqual(
      toolError('src is a directory; give the path of a file'),
    );
    expect(await write({ path: 'src/', content: 'x' })).toEqual(
      toolError('"src/" names a directory; give the path of a file'),
    );
    expect(await write({ path: '', content: 'x' })).toMatchObject({ error: 'invalid_arguments' });
  });

  it('keeps the permissions of the file it replaces and leaves no temporary file', async () => {
    await chmod(inside('notes.txt'), 0o640);
    await write({ path: 'notes.txt', content: 'x' });
    expect((await stat(inside('notes.txt'))).mode & 0o777).toBe(0o640);
    expect((await readdir(escape.fixture.root)).sort()).toEqual(['notes.txt', 'src']);
  });

  describe('stays inside the workspace', () => {
    it('refuses or takes literally every spelling of a path outside, changing nothing there', async () => {
      const unchanged = await escape.fixture.watchOutside();
      for (const [requested, outcome] of traversals(escape.fixture)) {
        const observation = await write({ path: requested, content: 'pwned', createDirectories: true });
        if ('refused' in outcome) {
          expect(observation, requested).toMatchObject({ ok: false, error: 'tool_error' });
          expect(observation.ok ? '' : observation.message, requested).toMatch(outcome.refused);
        } else {
          expect(observation, requested).toEqual(ok(`Created ${requested} (5 bytes written)`));
          await expect(readFile(path.join(escape.fixture.root, requested), 'utf8')).resolves.toBe('pwned');
        }
      }
      await unchanged();
    });

    it('refuses to write through a symbolic link to a file outside', async () => {
      await symlink(path.join(escape.fixture.outside, 'secret.txt'), inside('link.txt'));
      const unchanged = await escape.fixture.watchOutside();
      expect(await write({ path: 'link.txt', content: 'pwned' })).toEqual(
        toolError('Path refused: "link.txt" goes through a symbolic link that leads outside the workspace'),
      );
      await unchanged();
    });

    it('refuses to write through a chain of links that ends outside', async () => {
      await symlink(path.join(escape.fixture.outside, 'dir'), inside('hop2'));
      await symlink('hop2', inside('hop1'));
      const unchanged = await escape.fixture.watchOutside();
      expect(await write({ path: 'hop1/secret.txt', content: 'pwned' })).toEqual(
        toolError(
          'Path refused: "hop1/secret.txt" goes through a symbolic link that leads outside the workspace',
        ),
      );
      await unchanged();
    });

    it('refuses a dangling link to outside and creates nothing there', async () => {
      await symlink(path.join(escape.fixture.outside, 'created.txt'), inside('dangling.txt'));
      const unchanged = await escape.fixture.watchOutside();
      expect(await write({ path: 'dangling.txt', content: 'pwned' })).toEqual(
        toolError('Path refused: "dangling.txt" goes through a symbolic link whose target does not exist'),
      );
      await unchanged();
    });

    it('refuses to write through a symbolic link inside, naming the real path, and keeps the link', async () => {
      await symlink('notes.txt', inside('notes-link.txt'));
      expect(await write({ path: 'notes-link.txt', content: 'x' })).toEqual(
        toolError(
          'Path refused: "notes-link.txt" goes through a symbolic link and files are not written through ' +
            'links; the real path is "notes.txt", write there if you mean it',
        ),
      );
      expect((await lstat(inside('notes-link.txt'))).isSymbolicLink()).toBe(true);
      await expect(readFile(inside('notes.txt'), 'utf8')).resolves.toBe('notes\n');
    });

    it('refuses a symbolic link to /dev/null or /dev/zero', async () => {
      await symlink('/dev/null', inside('null'));
      await symlink('/dev/zero', inside('zero'));
      for (const name of ['null', 'zero']) {
        expect(await write({ path: name, content: 'x' })).toEqual(
          toolError(`Path refused: "${name}" goes through a symbolic link that leads outside the workspace`),
        );
      }
    });

    it('refuses a named pipe without waiting for a reader', { timeout: 10_000 }, async () => {
      escape.files.fifo(inside('pipe'));
      expect(await write({ path: 'pipe', content: 'x' })).toEqual(
        toolError('pipe is a named pipe, not a regular file; it was not written'),
      );
    });

    it('refuses a socket', async () => {
      await escape.files.socket(inside('sock'));
      expect(await write({ path: 'sock', content: 'x' })).toEqual(
        toolError('sock is a socket, not a regular file; it was not written'),
      );
    });

    it('refuses a character device inside the workspace', async (context) => {
      if (!escape.files.characterDevice(inside('zero'))) context.skip('making a device needs root');
      expect(await write({ path: 'zero', content: 'x' })).toEqual(
        toolError('zero is a character device, not a regular file; it was not written'),
      );
      expect((await lstat(inside('zero'))).isCharacterDevice()).toBe(true);
    });

    it('replaces a hard link to a file outside without changing that file', async () => {
      await link(path.join(escape.fixture.outside, 'secret.txt'), inside('hard.txt'));
      const unchanged = await escape.fixture.watchOutside();
      expect(await write({ path: 'hard.txt', content: 'replaced' })).toEqual(
        ok('Replaced hard.txt (8 bytes written)'),
      );
      await unchanged();
      await expect(readFile(path.join(escape.fixture.outside, 'secret.txt'), 'utf8')).resolves.toBe(
        OUTSIDE_SECRET,
      );
    });

    it('refuses to write into a directory swapped for a link to outside after the check', async () => {
      await mkdir(inside('dir'));
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(escape.fixture.workspace, async () => {
        await rename(inside('dir'), inside('dir-before'));
        await symlink(escape.fixture.outside, inside('dir'));
      });
      const observation = await write({ path: 'dir/secret.txt', content: 'pwned' });
      expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
      expect(observation.ok ? '' : observation.message).toMatch(
        /^Path refused: "dir\/secret.txt" changed while it was being opened/,
      );
      await unchanged();
      expect(await readdir(inside('dir-before'))).toEqual([]);
    });

    it('refuses to create directories under one swapped for a link to outside after the check', async () => {
      const unchanged = await escape.fixture.watchOutside();
      swapAfterResolve(escape.fixture.workspace, () => symlink(escape.fixture.outside, inside('new')));
      const observation = await write({ path: 'new/dir/x.txt', content: 'pwned', createDirectories: true });
      expect(observation.ok ? '' : observation.message).toMatch(/changed while it was being opened/);
      await unchanged();
    });

    it('writes the real file even when a directory elsewhere is swapped meanwhile', async () => {
      await writeFile(inside('src', 'keep.ts'), 'keep');
      swapAfterResolve(escape.fixture.workspace, async () => {
        await symlink(escape.fixture.outside, inside('elsewhere'));
      });
      expect(await write({ path: 'src/keep.ts', content: 'changed' })).toEqual(
        ok('Replaced src/keep.ts (7 bytes written)'),
      );
    });
  });
});
