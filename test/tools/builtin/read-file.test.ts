import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { createReadFileTool, READ_FILE_MAX_BYTES } from '../../../src/tools/builtin/read-file.js';
import type { ToolContext } from '../../../src/tools/define-tool.js';
import { Workspace } from '../../../src/tools/workspace.js';
import {
  OUTSIDE_SECRET,
  swapAfterResolve,
  traversals,
  useEscapeFixture,
} from '../../support/escape-fixture.js';
import { runBuiltin } from '../../support/run-builtin.js';
import { ok, toolError } from '../../support/observations.js';

/**
 * Layout of every test:
 *   <base>/ws/               the workspace
 *   <base>/ws/five.txt       five lines, no final newline
 *   <base>/ws/src/
 *   <base>/outside/secret.txt
 */
let base: string;
let root: string;
let workspace: Workspace;
/** Named pipes a test made; a writer is opened on each afterwards so no reader stays blocked. */
let pipes: string[];

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-read-file-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await writeFile(path.join(root, 'five.txt'), 'one\ntwo\nthree\nfour\nfive');
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'secret');
  workspace = await Workspace.open(root);
  pipes = [];
});

afterEach(async () => {
  for (const pipe of pipes) {
    try {
      closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading, which is what a passing test leaves behind.
    }
  }
  await rm(base, { recursive: true, force: true });
});

function read(args: Record<string, unknown>): Promise<Observation> {
  return runBuiltin(workspace, 'read_file', args);
}

function context(): ToolContext {
  return {
    signal: new AbortController().signal,
    callId: 'call_1',
    idempotencyKey: 'run:call_1',
    heartbeat: () => undefined,
    once: (_step, effect) => Promise.resolve(effect()),
  };
}

describe('readFile', () => {
  it('is a read-only tool named read_file', () => {
    expect(createReadFileTool(workspace)).toMatchObject({
      name: 'read_file',
      readOnly: true,
      timeoutSeconds: 30,
    });
  });

  it('returns the whole file when no lines are asked for', async () => {
    expect(await read({ path: 'five.txt' })).toEqual(ok('one\ntwo\nthree\nfour\nfive'));
  });

  it('returns the whole file when the model sends null for both line numbers', async () => {
    expect(await read({ path: 'five.txt', startLine: null, endLine: null })).toEqual(
      ok('one\ntwo\nthree\nfour\nfive'),
    );
  });

  it('returns an inclusive range of lines', async () => {
    expect(await read({ path: 'five.txt', startLine: 2, endLine: 4 })).toEqual(ok('two\nthree\nfour'));
    expect(await read({ path: 'five.txt', startLine: 3, endLine: 3 })).toEqual(ok('three'));
  });

  it('reads to the end from startLine, and from the start to endLine', async () => {
    expect(await read({ path: 'five.txt', startLine: 4, endLine: null })).toEqual(ok('four\nfive'));
    expect(await read({ path: 'five.txt', startLine: null, endLine: 2 })).toEqual(ok('one\ntwo'));
  });

  it('stops at the last line when endLine is past the end', async () => {
    expect(await read({ path: 'five.txt', startLine: 4, endLine: 99 })).toEqual(ok('four\nfive'));
  });

  it('returns lines as they are, carriage returns included', async () => {
    await writeFile(path.join(root, 'crlf.txt'), 'a\r\nb\r\nc');
    expect(await read({ path: 'crlf.txt', startLine: 2, endLine: 2 })).toEqual(ok('b\r'));
  });

  it('refuses an endLine before startLine', async () => {
    expect(await read({ path: 'five.txt', startLine: 4, endLine: 2 })).toEqual(
      toolError('endLine (2) is before startLine (4)'),
    );
  });

  it('refuses a startLine past the end, saying how many lines there are', async () => {
    expect(await read({ path: 'five.txt', startLine: 6 })).toEqual(
      toolError('five.txt has 5 lines; startLine 6 is past the end'),
    );
  });

  it('counts the lines of a file that ends with a newline as they are, without an extra empty line', async () => {
    await writeFile(path.join(root, 'two.txt'), 'a\nb\n');
    expect(await read({ path: 'two.txt', startLine: 3 })).toEqual(
      toolError('two.txt has 2 lines; startLine 3 is past the end'),
    );
  });

  it('refuses line numbers below 1 and an empty path as invalid arguments', async () => {
    expect(await read({ path: 'five.txt', startLine: 0 })).toMatchObject({ error: 'invalid_arguments' });
    expect(await read({ path: '' })).toMatchObject({ error: 'invalid_arguments' });
  });

  it('refuses a directory and points to list_directory', async () => {
    expect(await read({ path: 'src' })).toEqual(toolError('src is a directory; use list_directory'));
  });

  it('refuses a binary file', async () => {
    await writeFile(path.join(root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x0d, 0x0a]));
    expect(await read({ path: 'image.png' })).toEqual(
      toolError('image.png looks like a binary file (7 bytes); it was not read'),
    );
  });

  it('refuses a file larger than READ_FILE_MAX_BYTES without reading it', async () => {
    const big = path.join(root, 'big.log');
    await writeFile(big, '');
    await truncate(big, READ_FILE_MAX_BYTES + 1);
    expect(await read({ path: 'big.log' })).toEqual(
      toolError(
        `big.log is ${READ_FILE_MAX_BYTES + 1} bytes; read_file opens files up to ${READ_FILE_MAX_BYTES} bytes`,
      ),
    );
  });

  it('reads a text file of exactly READ_FILE_MAX_BYTES', async () => {
    await writeFile(path.join(root, 'limit.txt'), 'a'.repeat(READ_FILE_MAX_BYTES));
    const text = await createReadFileTool(workspace).execute({ path: 'limit.txt' }, context());
    expect(text).toHaveLength(READ_FILE_MAX_BYTES);
  });

  it('refuses a missing file', async () => {
    expect(await read({ path: 'nope.txt' })).toEqual(toolError('No such file or directory: nope.txt'));
  });

  it('refuses a path that leaves the workspace', async () => {
    expect(await read({ path: '../outside/secret.txt' })).toEqual(
      toolError('Path refused: "../outside/secret.txt" leads outside the workspace'),
    );
  });

  it('refuses a symbolic link that leads outside', async () => {
    await symlink(path.join(base, 'outside', 'secret.txt'), path.join(root, 'link.txt'));
    expect(await read({ path: 'link.txt' })).toEqual(
      toolError('Path refused: "link.txt" goes through a symbolic link that leads outside the workspace'),
    );
  });

  it('explains a symbolic link loop', async () => {
    await symlink('loop-b', path.join(root, 'loop-a'));
    await symlink('loop-a', path.join(root, 'loop-b'));
    expect(await read({ path: 'loop-a' })).toEqual(
      toolError('read_file failed: Too many levels of symbolic links: loop-a'),
    );
  });

  it('refuses a named pipe without waiting for a writer to open it', { timeout: 10_000 }, async () => {
    const pipe = path.join(root, 'pipe');
    execFileSync('mkfifo', [pipe]);
    pipes.push(pipe);
    await expect(
      Promise.resolve(createReadFileTool(workspace).execute({ path: 'pipe' }, context())),
    ).rejects.toThrow('pipe is not a regular file');
  });
});

describe('readFile stays inside the workspace', () => {
  const escape = useEscapeFixture('read-file-escape');
  const { inside } = escape;

  const readInFixture = (args: Record<string, unknown>): Promise<Observation> =>
    runBuiltin(escape.fixture.workspace, 'read_file', args);

  it('refuses or finds nothing at every spelling of a path outside', async () => {
    for (const [requested, outcome] of traversals(escape.fixture)) {
      const observation = await readInFixture({ path: requested });
      expect(observation, requested).toMatchObject({ ok: false, error: 'tool_error' });
      const message = observation.ok ? '' : observation.message;
      if ('refused' in outcome) expect(message, requested).toMatch(outcome.refused);
      else expect(message, requested).toBe(`No such file or directory: ${requested}`);
    }
  });

  it('reads a file whose name only looks like an escape, inside the workspace', async () => {
    await writeFile(inside('%2e%2e%2foutside%2fsecret.txt'), 'literal');
    await writeFile(inside('..\\outside\\secret.txt'), 'backslashes');
    await mkdir(inside('~'));
    await writeFile(inside('~', 'secret.txt'), 'tilde');
    expect(await readInFixture({ path: '%2e%2e%2foutside%2fsecret.txt' })).toEqual(ok('literal'));
    expect(await readInFixture({ path: '..\\outside\\secret.txt' })).toEqual(ok('backslashes'));
    expect(await readInFixture({ path: '~/secret.txt' })).toEqual(ok('tilde'));
  });

  it('refuses links to outside, directly and through a chain of links', async () => {
    await symlink(path.join(escape.fixture.outside, 'secret.txt'), inside('link.txt'));
    await symlink(path.join(escape.fixture.outside, 'dir'), inside('hop2'));
    await symlink('hop2', inside('hop1'));
    await symlink('hop1/secret.txt', inside('hop0.txt'));
    for (const requested of ['link.txt', 'hop1/secret.txt', 'hop0.txt']) {
      expect(await readInFixture({ path: requested })).toEqual(
        toolError(
          `Path refused: "${requested}" goes through a symbolic link that leads outside the workspace`,
        ),
      );
    }
  });

  it('refuses /dev/zero through a link, and a device, a socket and a named pipe inside', async (context) => {
    await symlink('/dev/zero', inside('zero-link'));
    await escape.files.socket(inside('sock'));
    escape.files.fifo(inside('pipe'));
    expect(await readInFixture({ path: 'zero-link' })).toEqual(
      toolError('Path refused: "zero-link" goes through a symbolic link that leads outside the workspace'),
    );
    expect(await readInFixture({ path: 'sock' })).toEqual(
      toolError('sock is not a regular file but a socket; only regular files can be opened'),
    );
    expect(await readInFixture({ path: 'pipe' })).toEqual(
      toolError('pipe is not a regular file but a named pipe; only regular files can be opened'),
    );
    if (!escape.files.characterDevice(inside('zero'))) context.skip('making a device needs root');
    expect(await readInFixture({ path: 'zero' })).toEqual(
      toolError('zero is not a regular file but a character device; only regular files can be opened'),
    );
  });

  it('refuses a file whose directory is swapped for a link to outside after the check', async () => {
    await mkdir(inside('dir'));
    await writeFile(inside('dir', 'secret.txt'), 'inside');
    swapAfterResolve(escape.fixture.workspace, async () => {
      await rename(inside('dir'), inside('dir-before'));
      await symlink(path.join(escape.fixture.outside), inside('dir'));
    });
    expect(await readInFixture({ path: 'dir/secret.txt' })).toEqual(
      toolError(
        'Path refused: "dir/secret.txt" changed while it was being opened (a part of it was replaced by a ' +
          'symbolic link or moved, maybe out of the workspace); nothing was read or written',
      ),
    );
  });

  it('refuses a file whose grandparent is swapped for a link to outside after the check', async () => {
    await mkdir(inside('a', 'dir'), { recursive: true });
    await writeFile(inside('a', 'dir', 'secret.txt'), 'inside');
    await mkdir(path.join(escape.fixture.outside, 'a', 'dir'), { recursive: true });
    await writeFile(path.join(escape.fixture.outside, 'a', 'dir', 'secret.txt'), OUTSIDE_SECRET);
    swapAfterResolve(escape.fixture.workspace, async () => {
      await rename(inside('a'), inside('a-before'));
      await symlink(path.join(escape.fixture.outside, 'a'), inside('a'));
    });
    const observation = await readInFixture({ path: 'a/dir/secret.txt' });
    expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
    expect(observation.ok ? '' : observation.message).toMatch(/changed while it was being opened/);
  });
});
