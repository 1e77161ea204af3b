import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { ToolError } from '../tool-error.js';

/** Directory names skipped unless asked for by path. */
const IGNORED = new Set(['.git', 'node_modules', '.keel']);

/** Most entries one listing returns. */
export const LIST_DIRECTORY_MAX_ENTRIES = 1_000;

/** Lists a directory inside the workspace, optionally recursively. */
export const listDirectory = defineTool({
  name: 'list_directory',
  description:
    'List the entries of a directory in the workspace. Directories end with "/". ' +
    'Use depth > 1 to descend into subdirectories; .git, node_modules and .keel are not descended into.',
  schema: z.object({
    path: z.string().default('.').describe('Directory relative to the workspace root'),
    depth: z.number().int().min(1).max(10).default(1).describe('How many levels to list'),
  }),
  readOnly: true,
  timeoutSeconds: 30,
  async execute({ path: requested, depth }, { workspace, signal }) {
    const root = await workspace.resolve(requested);
    const lines: string[] = [];
    let truncated = false;
    const walk = async (directory: string, level: number): Promise<void> => {
      signal.throwIfAborted();
      const entries = await readdir(directory, { withFileTypes: true }).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOTDIR') throw new ToolError(`${requested} is not a directory`);
          throw error;
        },
      );
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        if (lines.length >= LIST_DIRECTORY_MAX_ENTRIES) {
          truncated = true;
          return;
        }
        const absolute = path.join(directory, entry.name);
        const shown = path.relative(root, absolute);
        if (entry.isDirectory()) {
          lines.push(`${shown}/`);
          if (level < depth && !IGNORED.has(entry.name)) await walk(absolute, level + 1);
        } else {
          lines.push(entry.isSymbolicLink() ? `${shown} -> (symlink)` : shown);
        }
      }
    };
    await walk(root, 1);
    if (lines.length === 0) return `${requested} is empty`;
    if (truncated) lines.push(`… stopped after ${LIST_DIRECTORY_MAX_ENTRIES} entries; list a subdirectory`);
    return lines.join('\n');
  },
});
