import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Observation } from '../../../src/contract/observation.js';
import { createSanitizer } from '../../../src/safety/sanitize.js';
import { fileTools } from '../../../src/tools/builtin/file-tools.js';
import { createRunCommandTool } from '../../../src/tools/builtin/run-command.js';
import { defineTool, ToolDefinitionError } from '../../../src/tools/define-tool.js';
import type { Tool } from '../../../src/tools/define-tool.js';
import { executeToolCall } from '../../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../../src/tools/idempotency.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { createEscapeFixture, OUTSIDE_SECRET } from '../../support/escape-fixture.js';
import type { EscapeFixture } from '../../support/escape-fixture.js';
import { RecordingLogger } from '../../support/loggers.js';

let escape: EscapeFixture;

beforeEach(async () => {
  escape = await createEscapeFixture('file-tools');
});

afterEach(async () => {
  await escape.cleanup();
});

/** One call through the executor, as the worker makes it, with the worker's path labels. */
function call(
  tools: readonly Tool[],
  name: string,
  args: Record<string, unknown>,
  logger = new RecordingLogger(),
): Promise<Observation> {
  return executeToolCall(
    {
      call: { callId: 'call_1', name, argumentsJson: JSON.stringify(args) },
      idempotencyKey: 'run:call_1',
      outputCharLimit: 100_000,
    },
    {
      registry: new ToolRegistry(tools),
      sanitizer: createSanitizer({ paths: [{ path: escape.root, label: '.' }] }),
      logger,
      idempotencyStore: new MemoryIdempotencyStore(),
    },
  );
}

describe('fileTools', () => {
  it('offers the five file tools, bound to the workspace at root', async () => {
    const files = fileTools({ root: escape.root });
    expect(files.map((tool) => tool.name)).toEqual([
      'read_file',
      'list_directory',
      'search_files',
      'write_file',
      'edit_file',
    ]);
    expect(await call(files, 'read_file', { path: 'notes.txt' })).toMatchObject({
      ok: true,
      output: 'notes\n',
    });
    expect(await call(files, 'write_file', { path: 'made.txt', content: 'x' })).toMatchObject({ ok: true });
    await expect(readFile(path.join(escape.root, 'made.txt'), 'utf8')).resolves.toBe('x');
  });

  it('opens its workspace once, for every tool and for the worker that asks', async () => {
    const files = fileTools({ root: path.relative(process.cwd(), escape.root) });
    const workspace = await files.workspace();
    expect(workspace).toBeInstanceOf(Workspace);
    expect(workspace.root).toBe(await realpath(escape.root));
    expect(await files.workspace()).toBe(workspace);
    expect(Object.isFrozen(files)).toBe(true);
  });

  it('touches nothing until used, and opens a root that appeared after a failed attempt', async () => {
    const later = path.join(escape.base, 'later');
    const files = fileTools({ root: later });
    // The absolute root is the operator's and names the host: the model sees only what went wrong.
    expect(await call(files, 'list_directory', {})).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message: 'list_directory failed: No such file or directory',
    });
    await expect(files.workspace()).rejects.toThrow(/ENOENT/);
    await mkdir(later);
    await writeFile(path.join(later, 'hello.txt'), 'hi');
    expect(await call(files, 'list_directory', {})).toMatchObject({ ok: true, output: 'hello.txt' });
  });

  it('uses an opened Workspace as it is, with its protection', async () => {
    const workspace = await Workspace.open(escape.root, { protect: ['src'] });
    const files = fileTools(workspace);
    expect(await files.workspace()).toBe(workspace);
    expect(await call(files, 'write_file', { path: 'src/index.ts', content: 'pwned' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Path refused: "src\/index.ts" is protected by the worker/) as string,
    });
    await expect(readFile(path.join(escape.root, 'src', 'index.ts'), 'utf8')).resolves.toBe('export {};\n');
  });

  it('keeps the protect patterns it was given, and .git and .keel when given none', async () => {
    const custom = fileTools({ root: escape.root, protect: ['notes.txt'] });
    expect(
      await call(custom, 'edit_file', { path: 'notes.txt', oldText: 'notes', newText: 'x' }),
    ).toMatchObject({ ok: false, error: 'tool_error' });
    const defaults = fileTools({ root: escape.root });
    expect(
      await call(defaults, 'write_file', { path: '.git/config', content: 'x', createDirectories: true }),
    ).toMatchObject({ ok: false, message: expect.stringContaining('is protected by the worker') as string });
    await expect(readFile(path.join(escape.root, 'notes.txt'), 'utf8')).resolves.toBe('notes\n');
  });

  it('shares its workspace with run_command', async () => {
    const files = fileTools({ root: escape.root });
    const runCommand = createRunCommandTool({ allow: ['sh'], sandbox: 'off' }, files.workspace);
    const observation = await call([...files, runCommand], 'run_command', {
      program: 'sh',
      args: ['-c', 'pwd'],
    });
    expect(observation).toMatchObject({
      ok: true,
      output: expect.stringContaining(`stdout:\n${escape.root}\n`) as string,
    });
  });

  it.each([
    ['an empty root', { root: '' }, /Workspace root "" is not a usable path/],
    ['a root with a NUL byte', { root: 'a\0b' }, /is not a usable path/],
    ['no root at all', {}, /A workspace needs a root/],
    ['a protect pattern that climbs out', { root: '.', protect: ['../etc'] }, /Unusable protection pattern/],
    [
      'a misspelt protect option',
      { root: '.', protected: ['secrets'] },
      /unknown option\(s\) protected; the options are root/,
    ],
  ])('refuses %s when it is made, not at the first call', (_, location, message) => {
    expect(() => fileTools(location as { root: string })).toThrow(ToolDefinitionError);
    expect(() => fileTools(location as { root: string })).toThrow(message);
  });
});

describe('a custom tool', () => {
  it('gets no workspace in its context, so joining paths to its root reads nothing outside', async () => {
    const unchanged = await escape.watchOutside();
    // What a user wrote following the old docs: a path from the model joined to the workspace root.
    const naive = defineTool({
      name: 'naive_read',
      description: 'Read a file.',
      schema: z.object({ path: z.string() }),
      execute: ({ path: requested }, context) =>
        // @ts-expect-error the context has no workspace any more
        readFile(path.join((context.workspace as Workspace).root, requested), 'utf8'),
    });
    const logger = new RecordingLogger();
    const observation = await call(
      [...fileTools({ root: escape.root }), naive],
      'naive_read',
      { path: '../outside/secret.txt' },
      logger,
    );
    expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
    expect(JSON.stringify(observation)).not.toContain(OUTSIDE_SECRET);
    await unchanged();
  });
});
