import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolDefinitionError } from '../../define-tool.js';
import { ToolError } from '../../tool-error.js';
import { isInside } from '../../path-inside.js';

/** The allow-list as given, each entry checked to be a bare program name or an absolute path. */
export function checkAllowList(allow: readonly string[]): string[] {
  if (allow.length === 0) throw new ToolDefinitionError('run_command: the allow-list is empty');
  return allow.map((entry) => {
    const bareName = entry !== '' && entry !== '.' && entry !== '..' && !entry.includes('/');
    if ((!bareName && !path.isAbsolute(entry)) || entry.includes('\0')) {
      throw new ToolDefinitionError(
        `run_command: allow-list entry ${JSON.stringify(entry)} must be a program name or an absolute path`,
      );
    }
    return bareName ? entry : path.normalize(entry);
  });
}

/** The absolute path to run for `requested`, refused unless it is exactly what an allowed entry names. */
export async function resolveProgram(
  requested: string,
  allow: readonly string[],
  searchPath: readonly string[],
  root: string,
): Promise<string> {
  const list = allow.join(', ');
  const refuse = (): ToolError =>
    new ToolError(
      `run_command may run only these programs: ${list}. ${JSON.stringify(requested)} is not one of them.`,
    );
  let candidate: string | undefined;
  if (requested.includes('/')) {
    if (!path.isAbsolute(requested)) throw refuse();
    candidate = path.normalize(requested);
  } else if (allow.includes(requested)) {
    candidate = await findOnPath(requested, searchPath);
  } else {
    candidate = allow.find((entry) => path.isAbsolute(entry) && path.basename(entry) === requested);
    if (candidate === undefined) throw refuse();
  }
  // Compared as paths, not as resolved files: a multi-call binary (busybox) is one file with many faces.
  const allowed = await Promise.all(
    allow.map((entry) => (path.isAbsolute(entry) ? Promise.resolve(entry) : findOnPath(entry, searchPath))),
  );
  if (candidate === undefined)
    throw new ToolError(`${requested} is allowed but is not installed on the worker`);
  if (!allowed.includes(candidate)) throw refuse();
  if (!(await isExecutableFile(candidate))) {
    throw new ToolError(`${requested} is allowed but ${candidate} is not an executable file on the worker`);
  }
  if (isInside(root, candidate) || isInside(root, await realpath(candidate))) {
    throw new ToolError(
      `${requested} is refused: it lies inside the workspace, where the agent can change it`,
    );
  }
  return candidate;
}

/** The first executable file `name` in the directories of `searchPath`. */
export async function findOnPath(name: string, searchPath: readonly string[]): Promise<string | undefined> {
  for (const directory of searchPath) {
    const candidate = path.join(directory, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
