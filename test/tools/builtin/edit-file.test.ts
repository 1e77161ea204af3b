import { chmod, link, lstat, readFile, rename, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { createEditFileTool, EDIT_FILE_MAX_BYTES } from '../../../src/tools/builtin/edit-file.js';
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

const escape = useEscapeFixture('edit-file');
const { inside } = escape;

beforeEach(async () => {
  await writeFile(
    inside('code.ts'),
    'const alpha = 1;\nconst beta = 2;\n\nfunction f() {\n  return alpha + beta;\n}\n',
  );
});

function edit(args: Record<string, unknown>): Promise<Observation> {
  return runBuiltin(escape.fixture.workspace, 'edit_file', args);
}

const read = (...parts: string[]): Promise<string> => readFile(inside(...parts), 'utf8');

describe('editFile', () => {
  it('is a tool named edit_file that has side effects', () => {
    expect(createEditFileTool(escape.fixture.workspace)).toMatchObject({
      name: 'edit_file',
      readOnly: false,
      timeoutSeconds: 30,
    });
  });

  it('replaces the one occurrence and says where', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'const beta = 2;', newText: 'const beta = 3;' })).toEqual(
      ok('Replaced 1 occurrence in code.ts at line 2 (1 line became 1); code.ts now has 6 lines.'),
    );
    await expect(read('code.ts')).resolves.toBe(
      'const alpha = 1;\nconst beta = 3;\n\nfunction f() {\n  return alpha + beta;\n}\n',
    );
  });

  it('counts the lines a multi-line replacement spans', async () => {
    expect(
      await edit({
        path: 'code.ts',
        oldText: 'function f() {\n  return alpha + beta;\n}\n',
        newText: 'function f() {\n  const sum = alpha + beta;\n  return sum;\n}\n',
      }),
    ).toEqual(ok('Replaced 1 occurrence in code.ts at line 4 (3 lines became 4); code.ts now has 7 lines.'));
  });

  it('deletes the text when newText is empty', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'const beta = 2;\n', newText: '' })).toEqual(
      ok('Replaced 1 occurrence in code.ts at line 2 (1 line became 0); code.ts now has 5 lines.'),
    );
    await expect(read('code.ts')).resolves.not.toContain('beta = 2');
  });

  it('keeps every other byte as it was: CRLF, a BOM, invalid UTF-8, no final newline', async () => {
    const before = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('first\r\nsecond  \r\n'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('\r\nthird\tline'),
    ]);
    await writeFile(inside('mixed.txt'), before);
    expect(await edit({ path: 'mixed.txt', oldText: 'second', newText: 'SECOND!' })).toMatchObject({
      ok: true,
    });
    const after = await readFile(inside('mixed.txt'));
    const at = before.indexOf('second');
    expect(after).toEqual(
      Buffer.concat([before.subarray(0, at), Buffer.from('SECOND!'), before.subarray(at + 'second'.length)]),
    );
  });

  it('refuses text that is not in the file, asking to read it again', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'const gamma = 3;', newText: 'x' })).toEqual(
      toolError(
        'oldText was not found in code.ts; read the file again, it may have changed ' +
          '(whitespace, indentation and line breaks must match exactly)',
      ),
    );
  });

  it('points out CRLF line breaks when oldText has plain newlines', async () => {
    await writeFile(inside('dos.txt'), 'one\r\ntwo\r\n');
    const observation = await edit({ path: 'dos.txt', oldText: 'one\ntwo', newText: 'x' });
    expect(observation.ok ? '' : observation.message).toMatch(
      /The file has CRLF line breaks: write them as \\r\\n in oldText and newText$/,
    );
  });

  it('refuses ambiguous text, saying how often it occurs', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'alpha', newText: 'first' })).toEqual(
      toolError(
        'oldText was found 2 times in code.ts; add more of the surrounding text to make it unique, ' +
          'or set replaceAll to true to replace all 2',
      ),
    );
    await expect(read('code.ts')).resolves.toContain('alpha');
  });

  it('replaces every occurrence with replaceAll, listing their lines', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'alpha', newText: 'first', replaceAll: true })).toEqual(
      ok('Replaced 2 occurrences in code.ts at lines 1, 5 (1 line became 1 each); code.ts now has 6 lines.'),
    );
    await expect(read('code.ts')).resolves.not.toContain('alpha');
  });

  it('replaces non-overlapping occurrences only', async () => {
    await writeFile(inside('a.txt'), 'aaaa');
    await edit({ path: 'a.txt', oldText: 'aa', newText: 'b', replaceAll: true });
    await expect(read('a.txt')).resolves.toBe('bb');
  });

  it('refuses identical oldText and newText, and an empty oldText', async () => {
    expect(await edit({ path: 'code.ts', oldText: 'alpha', newText: 'alpha' })).toEqual(
      toolError('oldText and newText are the same; there is nothing to change'),
    );
    expect(await edit({ path: 'code.ts', oldText: '', newText: 'x' })).toMatchObject({
      error: 'invalid_arguments',
    });
  });

  it('applies an edit once, even when the call is retried and newText contains oldText', async () => {
    const store = new MemoryIdempotencyStore();
    const context: ToolContext = {
      signal: new AbortController().signal,
      callId: 'call_1',
      idempotencyKey: 'run:call_1',
      heartbeat: () => undefined,
      once: (step, effect) => runOnce(store, `run:call_1:${step}`, effect),
    };
    const input = { path: 'code.ts', oldText: 'const beta', newText: 'const beta', replaceAll: false };
    input.newText = '// beta\nconst beta';
    const editFile = createEditFileTool(escape.fixture.workspace);
    const first = await editFile.execute(input, context);
    await expect(Promise.resolve(editFile.execute(input, context))).resolves.toBe(first);
    await expect(read('code.ts')).resolves.toBe(
      'const alpha = 1;\n// beta\nconst beta = 2;\n\nfunction f() {\n  return alpha + beta;\n}\n',
    );
  });

  it('keeps the permissions of the file', async () => {
    await chmod(inside('code.ts'), 0o755);
    await edit({ path: 'code.ts', oldText: 'const beta = 2;', newText: 'const beta = 3;' });
    expect((await stat(inside('code.ts'))).mode & 0o777).toBe(0o755);
  });

  it('refuses a binary file, a directory and a missing file', async () => {
    await writeFile(inside('image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x41]));
    expect(await edit({ path: 'image.png', oldText: 'A', newText: 'B' })).toEqual(
      toolError('image.png looks like a binary file; edit_file changes text files only'),
    );
    expect(await edit({ path: 'src', oldText: 'A', newText: 'B' })).toEqual(
      toolError('src is a directory; use list_directory'),
    );
    expect(await edit({ path: 'nope.ts', oldText: 'A', newText: 'B' })).toEqual(
      toolError('No such file or directory: nope.ts'),
    );
  });

  it('refuses a sparse file over EDIT_FILE_MAX_BYTES without reading it', async () => {
    await writeFile(inside('huge.log'), 'alpha');
    await truncate(inside('huge.log'), 8 * 1024 ** 3);
    expect(await edit({ path: 'huge.log', oldText: 'alpha', newText: 'beta' })).toEqual(
      toolError(
        `huge.log is ${8 * 1024 ** 3} bytes; edit_file opens files up to ${EDIT_FILE_MAX_BYTES} bytes`,
      ),
    );
  });

  it('refuses an edit that would make the file larger than EDIT_FILE_MAX_BYTES', async () => {
    await writeFile(inside('grow.txt'), 'x'.repeat(1024));
    const observation = await edit({
      path: 'grow.txt',
      oldText: 'x',
      newText: 'y'.repeat(6 * 1024),
      replaceAll: true,
    });
    expect(observation.ok ? '' : observation.message).toMatch(
      /^the edit would make grow\.txt \d+ bytes; edit_file writes files up to \d+ bytes$/,
    );
    await expect(read('grow.txt')).resolves.toBe('x'.repeat(1024));
  });

  it('refuses an oldText or newText over EDIT_FILE_MAX_BYTES in UTF-8 before opening the file', async () => {
    // Fewer characters than the limit, more bytes: "é" is two bytes in UTF-8.
    const wide = 'é'.repeat(EDIT_FILE_MAX_BYTES / 2 + 1);
    expect(await edit({ path: 'code.ts', oldText: 'const beta = 2;', newText: wide })).toEqual(
      toolError(
        `newText is ${EDIT_FILE_MAX_BYTES + 2} bytes; edit_file changes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
      ),
    );
    expect(await edit({ path: 'nope.ts', oldText: wide, newText: '' })).toEqual(
      toolError(
        `oldText is ${EDIT_FILE_MAX_BYTES + 2} bytes; edit_file changes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
      ),
    );
    await expect(read('code.ts')).resolves.toContain('const beta = 2;');
  });

  it('refuses a replaceAll that would grow a small file to gigabytes, saying the exact size', async () => {
    await writeFile(inside('small.txt'), 'x'.repeat(4096));
    expect(
      await edit({ path: 'small.txt', oldText: 'x', newText: 'y'.repeat(1_000_000), replaceAll: true }),
    ).toEqual(
      toolError(
        `the edit would make small.txt ${4096 * 1_000_000} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
      ),
    );
    await expect(read('small.txt')).resolves.toBe('x'.repeat(4096));
  });

  it('lists the lines of the first 20 occurrences and counts the lines of the result', async () => {
    await writeFile(inside('list.txt'), 'item\n'.repeat(25));
    expect(
      await edit({ path: 'list.txt', oldText: 'item\n', newText: 'one\ntwo\n', replaceAll: true }),
    ).toEqual(
      ok(
        `Replaced 25 occurrences in list.txt at lines ${Array.from({ length: 20 }, (_, index) => index + 1).join(', ')}, … ` +
          '(1 line became 2 each); list.txt now has 50 lines.',
      ),
    );
    await expect(read('list.txt')).resolves.toBe('one\ntwo\n'.repeat(25));
  });

  it('replaces millions of occurrences of one byte exactly', async () => {
    await writeFile(inside('dense.txt'), 'a,'.repeat(EDIT_FILE_MAX_BYTES / 2));
    expect(await edit({ path: 'dense.txt', oldText: 'a', newText: 'b', replaceAll: true })).toEqual(
      ok(
        `Replaced 2621440 occurrences in dense.txt at lines ${'1, '.repeat(20)}… (1 line became 1 each); ` +
          'dense.txt now has 1 line.',
      ),
    );
    await expect(read('dense.txt')).resolves.toBe('b,'.repeat(EDIT_FILE_MAX_BYTES / 2));
  });

  describe('stays inside the workspace', () => {
    it('refuses or finds nothing at every spelling of a path outside, changing nothing there', async () => {
      const unchanged = await escape.fixture.watchOutside();
      for (const [requested, outcome] of traversals(escape.fixture)) {
        const observation = await edit({ path: requested, oldText: OUTSIDE_SECRET, newText: 'pwned' });
        expect(observation, requested).toMatchObject({ ok: false, error: 'tool_error' });
        const message = observation.ok ? '' : observation.message;
        if ('refused' in outcome) expect(message, requested).toMatch(outcome.refused);
        else expect(message, requested).toMatch(/^(No such file or directory: |No such directory: )/);
      }
      await unchanged();
    });

    it('refuses links to files outside, directly or through a chain', async () => {
      await symlink(path.join(escape.fixture.outside, 'secret.txt'), inside('link.txt'));
      await symlink(path.join(escape.fixture.outside, 'dir'), inside('hop2'));
      await symlink('hop2', inside('hop1'));
      const unchanged = await escape.fixture.watchOutside();
      for (const requested of ['link.txt', 'hop1/secret.txt']) {
        expect(await edit({ path: requested, oldText: OUTSIDE_SECRET, newText: 'pwned' })).toEqual(
          toolError(
            `Path refused: "${requested}" goes through a symbolic link that leads outside the workspace`,
          ),
        );
      }
      await unchanged();
    });

    it('refuses to edit through a link inside, naming the real path', async () => {
      await symlink('code.ts', inside('alias.ts'));
      expect(await edit({ path: 'alias.ts', oldText: 'alpha = 1', newText: 'alpha = 2' })).toEqual(
        toolError(
          'Path refused: "alias.ts" goes through a symbolic link and files are not written through links; ' +
            'the real path is "code.ts", write there if you mean it',
        ),
      );
      await expect(read('code.ts')).resolves.toContain('alpha = 1');
    });

    it('refuses /dev/zero through a link, a named pipe and a socket', { timeout: 10_000 }, async () => {
      await symlink('/dev/zero', inside('zero'));
      escape.files.fifo(inside('pipe'));
      await escape.files.socket(inside('sock'));
      expect(await edit({ path: 'zero', oldText: 'a', newText: 'b' })).toEqual(
        toolError('Path refused: "zero" goes through a symbolic link that leads outside the workspace'),
      );
      expect(await edit({ path: 'pipe', oldText: 'a', newText: 'b' })).toEqual(
        toolError('pipe is not a regular file but a named pipe; only regular files can be opened'),
      );
      expect(await edit({ path: 'sock', oldText: 'a', newText: 'b' })).toEqual(
        toolError('sock is not a regular file but a socket; only regular files can be opened'),
      );
    });

    it('refuses a character device inside the workspace', async (context) => {
      if (!escape.files.characterDevice(inside('device'))) context.skip('making a device needs root');
      expect(await edit({ path: 'device', oldText: 'a', newText: 'b' })).toEqual(
        toolError('device is not a regular file but a character device; only regular files can be opened'),
      );
    });

    it('edits a hard link to a file outside without changing that file', async () => {
      await link(path.join(escape.fixture.outside, 'secret.txt'), inside('hard.txt'));
      const unchanged = await escape.fixture.watchOutside();
      expect(await edit({ path: 'hard.txt', oldText: 'SECRET', newText: 'public' })).toMatchObject({
        ok: true,
      });
      await expect(read('hard.txt')).resolves.toBe(OUTSIDE_SECRET.replace('SECRET', 'public'));
      await unchanged();
    });

    it.each([
      ['read', 2],
      ['write', 3],
    ])(
      'refuses when the directory is swapped for a link to outside just before the %s',
      async (_step, afterCall) => {
        await writeFile(inside('src', 'secret.txt'), OUTSIDE_SECRET);
        await writeFile(path.join(escape.fixture.outside, 'secret.txt'), OUTSIDE_SECRET);
        const unchanged = await escape.fixture.watchOutside();
        swapAfterResolve(
          escape.fixture.workspace,
          async () => {
            await rename(inside('src'), inside('src-before'));
            await symlink(escape.fixture.outside, inside('src'));
          },
          afterCall,
        );
        const observation = await edit({ path: 'src/secret.txt', oldText: 'SECRET', newText: 'pwned' });
        expect(observation.ok ? '' : observation.message).toMatch(
          /^Path refused: "src\/secret.txt" changed while it was being opened/,
        );
        await unchanged();
        await expect(read('src-before', 'secret.txt')).resolves.toBe(OUTSIDE_SECRET);
        expect((await lstat(inside('src'))).isSymbolicLink()).toBe(true);
      },
    );

    it('refuses when the file changed between its read and the write', async () => {
      const workspace = escape.fixture.workspace;
      const readFileOfWorkspace = workspace.readFile.bind(workspace);
      vi.spyOn(workspace, 'readFile').mockImplementation(async (relativePath, options) => {
        const result = await readFileOfWorkspace(relativePath, options);
        await writeFile(inside('code.ts'), 'someone else wrote this; const beta = 2;');
        return result;
      });
      expect(await edit({ path: 'code.ts', oldText: 'const beta = 2;', newText: 'x' })).toEqual(
        toolError('code.ts changed while it was being edited; read it again'),
      );
      await expect(read('code.ts')).resolves.toBe('someone else wrote this; const beta = 2;');
    });
  });
});
