import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import type { WorkspaceDirectory } from '../workspace.js';
import { IGNORED_DIRECTORIES } from './ignored-directories.js';

/** Most entries one listing returns. */
export const LIST_DIRECTORY_MAX_ENTRIES = 1_000;

/** `list_directory` for the workspace of `source`: lists a directory, optionally recursively. */
export function createListDirectoryTool(source: WorkspaceSource) {
  const open = workspaceOpener(source);
  return defineTool({
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
    execute({ path: requested, depth }, { signal }) {
      return inWorkspace(open, async (workspace) => {
        const lines: string[] = [];
        let truncated = false;
        // Subdirectories are opened through their held parent, never by path: one swapped for a symbolic
        // link mid-listing is refused rather than followed outside.
        const walk = async (
          directory: WorkspaceDirectory,
          shownPrefix: string,
          level: number,
        ): Promise<void> => {
          signal.throwIfAborted();
          const entries = await directory.entries();
          entries.sort((a, b) => a.name.localeCompare(b.name));
          for (const entry of entries) {
            if (lines.length >= LIST_DIRECTORY_MAX_ENTRIES) {
              truncated = true;
              return;
            }
            const shown = shownPrefix === '' ? entry.name : `${shownPrefix}/${entry.name}`;
            if (entry.isDirectory()) {
              lines.push(`${shown}/`);
              if (level < depth && !IGNORED_DIRECTORIES.has(entry.name)) {
                const child = await directory.openDirectory(entry.name);
                try {
                  await walk(child, shown, level + 1);
                } finally {
                  await child.close();
                }
              }
            } else {
              lines.push(entry.isSymbolicLink() ? `${shown} -> (symlink)` : shown);
            }
          }
        };
        const root = await workspace.openDirectory(requested);
        try {
          await walk(root, '', 1);
        } finally {
          await root.close();
        }
        if (lines.length === 0) return `${requested} is empty`;
        if (truncated)
          lines.push(`… stopped after ${LIST_DIRECTORY_MAX_ENTRIES} entries; list a subdirectory`);
        return lines.join('\n');
      });
    },
  });
}
