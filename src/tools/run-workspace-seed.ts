import { execFile } from 'node:child_process';
import { cp } from 'node:fs/promises';

/** What a new run's workspace starts as: an empty directory, a copy of a seed directory, or a git clone. */
export type WorkspaceSeed =
  { kind: 'empty' } | { kind: 'directory'; path: string } | { kind: 'git'; url: string };

/** Longest a `git clone` for a new workspace may take before it is stopped and the call fails. */
export const GIT_CLONE_TIMEOUT_MS = 10 * 60_000;

/**
 * Why `url` must not be cloned from, or undefined: a URL with credentials in it (`https://token@…`,
 * `https://user:password@…`) would show them in logs, process lists and git's own messages. An SSH
 * user name (`git@host:repo`, `ssh://git@host/repo`) is no secret and stays allowed.
 */
export function gitUrlProblem(url: string): string | undefined {
  if (url.trim() === '' || url.includes('\0') || url.startsWith('-')) return 'it is not a repository URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: scp-like `user@host:path` or a local path, neither of which can carry a password.
    return undefined;
  }
  const sshLike = parsed.protocol === 'ssh:' || parsed.protocol === 'git+ssh:';
  if (parsed.password !== '' || (parsed.username !== '' && !sshLike)) {
    return (
      'it has credentials in it (user or password before the host), which would show in logs and process ' +
      'lists; give the URL without them and let git find them (a credential helper, an SSH key)'
    );
  }
  return undefined;
}

/** Fills `directory` (new and empty) as `seed` says. */
export async function populateWorkspace(seed: WorkspaceSeed, directory: string): Promise<void> {
  if (seed.kind === 'empty') return;
  if (seed.kind === 'directory') {
    // Links are copied as links: one that leads outside is refused by the workspace when followed.
    await cp(seed.path, directory, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
    return;
  }
  await gitClone(seed.url, directory);
}

function gitClone(url: string, directory: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['clone', '--quiet', '--', url, directory],
      {
        timeout: GIT_CLONE_TIMEOUT_MS,
        // Never wait for a password on a terminal nobody watches.
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
        maxBuffer: 1024 * 1024,
      },
      (error, _stdout, stderr) => {
        if (error === null) return resolve();
        const said = String(stderr).trim().split('\n').slice(-3).join(' ');
        reject(new Error(`git clone of the workspace seed failed: ${said || error.message}`));
      },
    );
  });
}
