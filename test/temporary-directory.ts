import { rmSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The run's directory, the TMPDIR it replaced, and how many tiers still use it. */
interface Shared {
  directory: string;
  previous: string | undefined;
  users: number;
  /** Removes the directory when vitest exits without tearing down (Ctrl-C, SIGTERM). */
  onExit: () => void;
}

// Vitest runs a project's global setup once per project (tier), each loading this module anew:
// the shared state lives on the vitest process's global object, so the tiers share one directory.
const key = Symbol.for('keel.test.temporary-directory');
const shared = globalThis as { [key]?: Shared };

/**
 * One directory in the system temp directory for the whole test run, removed when it ends, passed
 * or failed. It becomes TMPDIR before any test process starts, so whatever a test, a helper, or a
 * process they start puts in `os.tmpdir()` (a workspace, a state directory, a server's data) lands in
 * it: no test has to remove what it made, and two runs on one machine never share a temp entry.
 * Listed first in every tier's `globalSetup`, so it is torn down after the tier's other set-ups.
 */
export default async function setup(): Promise<() => Promise<void>> {
  let state = shared[key];
  if (state === undefined) {
    const previous = process.env.TMPDIR;
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-vitest-'));
    // Open to every user, sticky, as /tmp is: a test runs PostgreSQL as its own user in a directory
    // in here (test/support/postgres.ts), and what such a user's processes put in TMPDIR lands here.
    await chmod(directory, 0o1777);
    // Test processes are forked after every global set-up ran, with the environment as it is then.
    process.env.TMPDIR = directory;
    const onExit = (): void => {
      try {
        rmSync(directory, { recursive: true, force: true });
      } catch {
        // Exiting anyway: what a process still writes into it keeps it.
      }
    };
    process.once('exit', onExit);
    state = { directory, previous, users: 0, onExit };
    shared[key] = state;
  }
  state.users += 1;
  const current = state;
  return async () => {
    current.users -= 1;
    if (current.users > 0) return;
    delete shared[key];
    process.off('exit', current.onExit);
    if (current.previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = current.previous;
    await reportLeftovers(current.directory);
    await remove(current.directory);
  };
}

/**
 * Says, in one line, which `keel-*` entries the tests left (grouped by name up to the random part):
 * not a failure, since the directory goes anyway, but a helper that never cleans up shows here.
 */
async function reportLeftovers(directory: string): Promise<void> {
  const names = (await readdir(directory).catch(() => [])).filter((name) => name.startsWith('keel-'));
  if (names.length === 0) return;
  const counts = new Map<string, number>();
  for (const name of names) {
    const group = name.replace(/-[^-]*$/u, '-*');
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  const groups = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([group, n]) => `${group} ×${n}`);
  console.warn(
    `The tests left ${names.length} keel-* entries in ${directory} (removed now): ${groups.join(', ')}`,
  );
}

/**
 * Removes the run's directory. A process a test started may still be writing into it (retried), and
 * a test may have left a directory without write permission (made writable, then retried); what
 * still cannot go is reported, never failed on.
 */
async function remove(directory: string): Promise<void> {
  const attempt = () => rm(directory, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  try {
    await attempt();
  } catch {
    try {
      await makeWritable(directory);
      await attempt();
    } catch (error) {
      console.warn(`Could not remove the tests' temporary directory ${directory}: ${String(error)}`);
    }
  }
}

async function makeWritable(directory: string): Promise<void> {
  await chmod(directory, 0o700).catch(() => undefined);
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await makeWritable(path.join(directory, entry.name));
}
