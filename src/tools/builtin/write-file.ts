import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { ToolError } from '../tool-error.js';

/** Largest content write_file writes, in UTF-8 bytes. */
export const WRITE_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** `write_file` for the workspace of `source`: creates or replaces a text file, atomically. */
export function createWriteFileTool(source: WorkspaceSource) {
  const open = workspaceOpener(source);
  return defineTool({
    name: 'write_file',
    description:
      'Create a text file in the workspace, or replace one, with the given content (UTF-8). The file is ' +
      'written whole or not at all. Set createDirectories to create missing parent directories and ' +
      'overwrite: false to refuse replacing an existing file. To change part of a file, use edit_file.',
    schema: z.object({
      path: z.string().min(1).describe('File path relative to the workspace root, e.g. "src/new-module.ts"'),
      content: z.string().describe('The complete new content of the file'),
      createDirectories: z.boolean().default(false).describe('Create missing parent directories'),
      overwrite: z.boolean().default(true).describe('Replace the file if it exists'),
    }),
    readOnly: false,
    timeoutSeconds: 30,
    execute({ path, content, createDirectories, overwrite }, context) {
      const { signal } = context;
      return inWorkspace(open, async (workspace) => {
        const data = Buffer.from(content, 'utf8');
        if (data.byteLength > WRITE_FILE_MAX_BYTES) {
          throw new ToolError(
            `content is ${data.byteLength} bytes; write_file writes at most ${WRITE_FILE_MAX_BYTES} bytes`,
          );
        }
        const write = async (): Promise<string> => {
          const { created } = await workspace.writeFile(path, data, { createDirectories, overwrite, signal });
          const bytes = data.byteLength === 1 ? '1 byte' : `${data.byteLength} bytes`;
          return `${created ? 'Created' : 'Replaced'} ${path} (${bytes} written)`;
        };
        // Writing the same content again is harmless; "only if absent" is not: a retry of a call that
        // succeeded would find its own file and refuse. So that one runs once and remembers its answer.
        return overwrite ? write() : context.once('write', write);
      });
    },
  });
}
