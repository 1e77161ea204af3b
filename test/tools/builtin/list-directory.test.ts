import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import {
  createListDirectoryTool,
  LIST_DIRECTORY_MAX_ENTRIES,
} from '../../../src/tools/builtin/list-directory.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { swapAfterResolve, swapBeforeOpeningSubdirectory } from '../../support/escape-fixture.js';
import { runBuiltin } from '../../support/run-builtin.js';
import { toolError } from '../../support/observations.js';

/**
 * Layout of every test:
 *   <base>/ws/readme.md
 *   <base>/ws/src/index.ts
 *   <base>/ws/src/lib/util.ts
 *   <base>/ws/.git/HEAD
 *   <base>/ws/node_modules/dep/index.js
 *   <base>/ws/packages/app/node_modules/x.js
 *   <base>/ws/packages/app/main.ts
 *   <base>/outside/secret.txt
 */
let base: string;
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-list-directory-')));
  root = path.join(base, 'ws');
  const files = [
    'readme.md',
    'src/index.ts',
    'src/lib/util.ts',
    '.git/HEAD',
    'node_modules/dep/index.js',
    'packages/app/node_modules/x.js',
    'packages/app/main.ts',
  ];
  for (const file of files) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), file);
  }
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'secret');
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function list(args: Record<string, unknown>): Promise<Observation> {
  return runBuiltin(workspace, 'list_directory', args);
}

/** The listed lines of a successful listing. */
async function lines(args: Record<string, unknown>): Promise<string[]> {
  const observation = await list(args);
  if (!observation.ok) throw new Error(`listing failed: ${observation.message}`);
  return observation.output.split('\n');
}

describe('listDirectory', () => {
  it('is a read-only tool named list_directory', () => {
    expect(createListDirectoryTool(workspace)).toMatchObject({
      name: 'list_directory',
      readOnly: true,
      timeoutSeconds: 30,
    });
  });

  it('lists the root one level deep, sorted, with directories ending in "/"', async () => {
    expect(await lines({})).toEqual(['.git/', 'node_modules/', 'packages/', 'readme.md', 'src/']);
  });

  it('uses the defaults when the model sends null for path and depth', async () => {
    expect(await lines({ path: null, depth: null })).toEqual(await lines({ path: '.', depth: 1 }));
  });

  it('descends as many levels as depth asks, with paths relative to the listed directory', async () => {
    expect(await lines({ path: 'src', depth: 1 })).toEqual(['index.ts', 'lib/']);
    expect(await lines({ path: 'src', depth: 2 })).toEqual(['index.ts', 'lib/', 'lib/util.ts']);
    expect(await lines({ depth: 2 })).toEqual([
      '.git/',
      'node_modules/',
      'packages/',
      'packages/app/',
      'readme.md',
      'src/',
      'src/index.ts',
      'src/lib/',
    ]);
  });

  it('shows .git and node_modules but does not descend into them, at any level', async () => {
    expect(await lines({ depth: 10 })).toEqual([
      '.git/',
      'node_modules/',
      'packages/',
      'packages/app/',
      'packages/app/main.ts',
      'packages/app/node_modules/',
      'readme.md',
      'src/',
      'src/index.ts',
      'src/lib/',
      'src/lib/util.ts',
    ]);
  });

  it('lists inside .git or node_modules when asked for by path', async () => {
    expect(await lines({ path: '.git' })).toEqual(['HEAD']);
    expect(await lines({ path: 'node_modules', depth: 2 })).toEqual(['dep/', 'dep/index.js']);
  });

  it('marks symbolic links and does not follow them, even to a directory', async () => {
    await symlink(path.join(base, 'outside'), path.join(root, 'src', 'escape'));
    await symlink('lib', path.join(root, 'src', 'alias'));
    expect(await lines({ path: 'src', depth: 3 })).toEqual([
      'alias -> (symlink)',
      'escape -> (symlink)',
      'index.ts',
      'lib/',
      'lib/util.ts',
    ]);
  });

  it('says when a directory is empty', async () => {
    await mkdir(path.join(root, 'empty'));
    expect(await list({ path: 'empty' })).toEqual({ callId: 'call_1', ok: true, output: 'empty is empty' });
  });

  it('refuses a file', async () => {
    expect(await list({ path: 'readme.md' })).toEqual(toolError('readme.md is not a directory'));
  });

  it('refuses a missing directory', async () => {
    expect(await list({ path: 'nope' })).toEqual(toolError('No such file or directory: nope'));
  });

  it('refuses a path that leaves the workspace', async () => {
    expect(await list({ path: '..' })).toEqual(toolError('Path refused: ".." leads outside the workspace'));
  });

  it('refuses a symbolic link to a directory outside', async () => {
    await symlink(path.join(base, 'outside'), path.join(root, 'escape'));
    expect(await list({ path: 'escape' })).toEqual(
      toolError('Path refused: "escape" goes through a symbolic link that leads outside the workspace'),
    );
  });

  it('refuses a depth outside 1 to 10 as invalid arguments', async () => {
    expect(await list({ depth: 0 })).toMatchObject({ error: 'invalid_arguments' });
    expect(await list({ depth: 11 })).toMatchObject({ error: 'invalid_arguments' });
    expect(await list({ depth: 1.5 })).toMatchObject({ error: 'invalid_arguments' });
  });

  it('stops after LIST_DIRECTORY_MAX_ENTRIES entries and says so', async () => {
    const many = path.join(root, 'many');
    await mkdir(many);
    const names = Array.from(
      { length: LIST_DIRECTORY_MAX_ENTRIES + 5 },
      (_, index) => `f${String(index).padStart(5, '0')}`,
    );
    await Promise.all(names.map((name) => writeFile(path.join(many, name), '')));
    const listed = await lines({ path: 'many' });
    expect(listed).toHaveLength(LIST_DIRECTORY_MAX_ENTRIES + 1);
    expect(listed.slice(0, -1)).toEqual(names.slice(0, LIST_DIRECTORY_MAX_ENTRIES));
    expect(listed.at(-1)).toBe(`… stopped after ${LIST_DIRECTORY_MAX_ENTRIES} entries; list a subdirectory`);
  });

  it('lists exactly LIST_DIRECTORY_MAX_ENTRIES entries without a stop note', async () => {
    const many = path.join(root, 'many');
    await mkdir(many);
    await Promise.all(
      Array.from({ length: LIST_DIRECTORY_MAX_ENTRIES }, (_, index) =>
        writeFile(path.join(many, `f${index}`), ''),
      ),
    );
    const listed = await lines({ path: 'many' });
    expect(listed).toHaveLength(LIST_DIRECTORY_MAX_ENTRIES);
    expect(listed.some((line) => line.startsWith('…'))).toBe(false);
  });
});

describe('listDirectory stays inside the workspace', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses a subdirectory swapped for a link to outside while it lists, naming no entry outside', async () => {
    await mkdir(path.join(root, 'sub'));
    await writeFile(path.join(root, 'sub', 'inner.txt'), '');
    swapBeforeOpeningSubdirectory('sub', async () => {
      await rename(path.join(root, 'sub'), path.join(root, 'sub-before'));
      await symlink(path.join(base, 'outside'), path.join(root, 'sub'));
    });
    const observation = await list({ depth: 2 });
    expect(observation).toEqual(
      toolError(
        'Path refused: "sub" changed while it was being opened (a part of it was replaced by a symbolic ' +
          'link or moved, maybe out of the workspace); nothing was read or written',
      ),
    );
  });

  it('refuses a directory swapped for a link to outside after its path was checked', async () => {
    await mkdir(path.join(root, 'sub'));
    swapAfterResolve(workspace, async () => {
      await rename(path.join(root, 'sub'), path.join(root, 'sub-before'));
      await symlink(path.join(base, 'outside'), path.join(root, 'sub'));
    });
    const observation = await list({ path: 'sub' });
    expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
    expect(observation.ok ? '' : observation.message).toMatch(
      /^Path refused: "sub" changed while it was being opened/,
    );
  });
});
