import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A new directory holding only these programs (name → target, as symlinks), to put on PATH. */
export async function binDirectory(programs: Record<string, string>): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-path-'));
  for (const [name, target] of Object.entries(programs)) await symlink(target, path.join(directory, name));
  return directory;
}
