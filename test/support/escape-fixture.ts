import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, openSync } from 'node:fs';
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { Workspace } from '../../src/tools/workspace.js';
import { WorkspaceDirectory } from '../../src/tools/workspace-directory.js';

/** Text of the files outside the workspace: must never show up in any tool's output. */
export const OUTSIDE_SECRET = 'OUTSIDE-SECRET-do-not-leak';

/**
 * A workspace beside directories it must never reach:
 *   <base>/ws/notes.txt            "notes\n"
 *   <base>/ws/src/index.ts         "export {};\n"
 *   <base>/outside/secret.txt      OUTSIDE_SECRET
 *   <base>/outside/dir/secret.txt  OUTSIDE_SECRET
 *   <base>/ws-sibling/x.txt        OUTSIDE_SECRET (shares the workspace's name as a prefix)
 */
export interface EscapeFixture {
  base: string;
  root: string;
  outside: string;
  workspace: Workspace;
  /** Everything outside the workspace, to compare before and after: nothing may be read into output or changed. */
  outsideState(): Promise<Map<string, string>>;
  /** Records everything outside now; the returned check fails if any of it changed since. */
  watchOutside(): Promise<() => Promise<void>>;
  cleanup(): Promise<void>;
}

/** Builds the layout above in a fresh temporary directory. */
export async function createEscapeFixture(
  prefix: string,
  options: { descriptorPaths?: boolean } = {},
): Promise<EscapeFixture> {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), `keel-${prefix}-`)));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await writeFile(path.join(root, 'notes.txt'), 'notes\n');
  await writeFile(path.join(root, 'src', 'index.ts'), 'export {};\n');
  await mkdir(path.join(outside, 'dir'), { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), OUTSIDE_SECRET);
  await writeFile(path.join(outside, 'dir', 'secret.txt'), OUTSIDE_SECRET);
  await mkdir(path.join(base, 'ws-sibling'));
  await writeFile(path.join(base, 'ws-sibling', 'x.txt'), OUTSIDE_SECRET);
  const workspace = await Workspace.open(root, options);
  const outsideState = () => describeTree(base, (name) => name !== 'ws');
  return {
    base,
    root,
    outside,
    workspace,
    outsideState,
    async watchOutside() {
      const before = await outsideState();
      return async () => expect(await outsideState()).toEqual(before);
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/**
 * Every entry under `directory` (not following links) with its type, size, mtime and content hash;
 * `include` filters the top-level names.
 */
export async function describeTree(
  directory: string,
  include: (name: string) => boolean = () => true,
): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  const visit = async (relative: string): Promise<void> => {
    const absolute = path.join(directory, relative);
    const info = await lstat(absolute);
    if (info.isDirectory()) {
      state.set(relative, `directory ${info.mtimeMs}`);
      for (const name of (await readdir(absolute)).sort()) {
        if (relative === '' && !include(name)) continue;
        await visit(path.join(relative, name));
      }
    } else if (info.isSymbolicLink()) {
      state.set(relative, `link -> ${await readlink(absolute)}`);
    } else if (info.isFile()) {
      const hash = createHash('sha256')
        .update(await readFile(absolute))
        .digest('hex');
      state.set(relative, `file ${info.size} ${info.mtimeMs} ${hash}`);
    } else {
      state.set(relative, `special ${info.mode}`);
    }
  };
  await visit('');
  return state;
}

/**
 * Makes `swap` run right after one of the workspace's path checks returns and before the path is used:
 * the moment an attacker racing the tool would swap a directory for a symbolic link. `on` picks the
 * check: the n-th (default the first), or the first of a given path.
 */
export function swapAfterResolve(
  workspace: Workspace,
  swap: () => Promise<void>,
  on: number | string = 1,
): void {
  const resolve = workspace.resolve.bind(workspace);
  let calls = 0;
  let swapped = false;
  vi.spyOn(workspace, 'resolve').mockImplementation(async (relativePath, options) => {
    const resolved = await resolve(relativePath, options);
    calls++;
    if (!swapped && (typeof on === 'number' ? calls === on : relativePath === on)) {
      swapped = true;
      await swap();
    }
    return resolved;
  });
}

/**
 * Makes `swap` run when a tool walking a tree is about to open the subdirectory `name` through its
 * held parent: after the listing said it is a directory, before it is opened.
 */
export function swapBeforeOpeningSubdirectory(name: string, swap: () => Promise<void>): void {
  const openDirectory = WorkspaceDirectory.prototype.openDirectory;
  let swapped = false;
  vi.spyOn(WorkspaceDirectory.prototype, 'openDirectory').mockImplementation(async function (
    this: WorkspaceDirectory,
    entry: string,
  ) {
    if (!swapped && entry === name) {
      swapped = true;
      await swap();
    }
    return openDirectory.call(this, entry);
  });
}

/** How a traversal attempt must end: refused with a message, or taken literally as a name inside. */
export type TraversalOutcome = { refused: RegExp } | { literal: true };

const leavesWorkspace = { refused: /^Path refused: .* leads outside the workspace$/ };
const absolutePath = {
  refused: /^Path refused: .* is absolute; give a path relative to the workspace root$/,
};

/** Spellings of "a file outside", each with what must happen; paths relative to the workspace root. */
export function traversals(fixture: EscapeFixture): [string, TraversalOutcome][] {
  return [
    ['../outside/secret.txt', leavesWorkspace],
    ['a/../../outside/secret.txt', leavesWorkspace],
    ['./../outside/secret.txt', leavesWorkspace],
    ['src/../../outside/secret.txt', leavesWorkspace],
    ['src/./../.././outside/secret.txt', leavesWorkspace],
    ['..//outside//secret.txt', leavesWorkspace],
    ['../ws-sibling/x.txt', leavesWorkspace],
    ['../ws/../outside/secret.txt', leavesWorkspace],
    [path.join(fixture.outside, 'secret.txt'), absolutePath],
    ['/etc/passwd', absolutePath],
    ['C:\\outside\\secret.txt', absolutePath],
    ['\\\\server\\share\\secret.txt', absolutePath],
    ['notes.txt\0/../../outside/secret.txt', { refused: /^Path refused: it contains a NUL byte$/ }],
    // Never decoded, never split on "\", never expanded: odd names inside the workspace.
    ['%2e%2e%2foutside%2fsecret.txt', { literal: true }],
    ['..%2foutside%2fsecret.txt', { literal: true }],
    ['%2e%2e/%2e%2e/outside/secret.txt', { literal: true }],
    ['..\\outside\\secret.txt', { literal: true }],
    ['~/secret.txt', { literal: true }],
    ['\uff0e\uff0e/outside/secret.txt', { literal: true }],
    ['..../outside/secret.txt', { literal: true }],
  ];
}

/** Special files a test made, released afterwards so that a wrongly opened one cannot hang the run. */
export class SpecialFiles {
  readonly #pipes: string[] = [];
  readonly #servers: Server[] = [];

  /** A named pipe (mkfifo). */
  fifo(file: string): string {
    execFileSync('mkfifo', [file]);
    this.#pipes.push(file);
    return file;
  }

  /** A listening Unix socket. */
  async socket(file: string): Promise<string> {
    const server = createServer();
    this.#servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, resolve);
    });
    return file;
  }

  /** A character device like /dev/zero (1:5), when the process may make one (root); else false. */
  characterDevice(file: string): boolean {
    try {
      execFileSync('mknod', [file, 'c', '1', '5'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /** Opens the other end of every pipe (unblocking any open that waits on it) and closes the sockets. */
  async release(): Promise<void> {
    for (const pipe of this.#pipes) {
      for (const flags of [constants.O_WRONLY, constants.O_RDONLY]) {
        try {
          closeSync(openSync(pipe, flags | constants.O_NONBLOCK));
        } catch {
          // ENXIO or ENOENT: nobody waits on that end, which is what a passing test leaves behind.
        }
      }
    }
    await Promise.all(this.#servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** What {@link useEscapeFixture} gives each test: read its members inside tests and hooks only. */
export interface EscapeContext {
  readonly fixture: EscapeFixture;
  readonly files: SpecialFiles;
  /** A path inside the workspace. */
  inside(...parts: string[]): string;
}

/**
 * Gives every test of the calling `describe` (or file) a fresh escape fixture and special-files
 * holder, and cleans both up (and restores mocks) after it.
 */
export function useEscapeFixture(prefix: string, options: { descriptorPaths?: boolean } = {}): EscapeContext {
  let current: { fixture: EscapeFixture; files: SpecialFiles } | undefined;
  const active = () => {
    if (current === undefined) throw new Error('the escape fixture is only available inside a test');
    return current;
  };
  beforeEach(async () => {
    current = { fixture: await createEscapeFixture(prefix, options), files: new SpecialFiles() };
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await current?.files.release();
    await current?.fixture.cleanup();
    current = undefined;
  });
  return {
    get fixture() {
      return active().fixture;
    },
    get files() {
      return active().files;
    },
    inside: (...parts) => path.join(active().fixture.root, ...parts),
  };
}
