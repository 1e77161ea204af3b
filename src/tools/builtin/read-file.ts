import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { ToolError } from '../tool-error.js';
import { looksBinary } from './looks-binary.js';

/** Largest file read_file opens; bigger files need a narrower tool (or a line range, when added). */
export const READ_FILE_MAX_BYTES = 2 * 1024 * 1024;

/** `read_file` for the workspace of `source`: reads a UTF-8 text file, optionally a range of its lines. */
export function createReadFileTool(source: WorkspaceSource) {
  const open = workspaceOpener(source);
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file in the workspace. Paths are relative to the workspace root. ' +
      'Give startLine/endLine (1-based, inclusive) to read part of a long file; lines are returned as they are.',
    schema: z.object({
      path: z.string().min(1).describe('File path relative to the workspace root, e.g. "src/index.ts"'),
      startLine: z.number().int().min(1).optional().describe('First line to return (1-based)'),
      endLine: z.number().int().min(1).optional().describe('Last line to return (inclusive)'),
    }),
    readOnly: true,
    timeoutSeconds: 30,
    execute({ path, startLine, endLine }, { signal }) {
      return inWorkspace(open, async (workspace) => {
        if (startLine !== undefined && endLine !== undefined && endLine < startLine) {
          throw new ToolError(`endLine (${endLine}) is before startLine (${startLine})`);
        }
        // The workspace refuses directories, devices, FIFOs, sockets, oversized files and paths swapped for links.
        const { bytes, stats } = await workspace.readFile(path, {
          maxBytes: READ_FILE_MAX_BYTES,
          tool: 'read_file',
          signal,
        });
        if (looksBinary(bytes)) {
          throw new ToolError(`${path} looks like a binary file (${stats.size} bytes); it was not read`);
        }
        const text = bytes.toString('utf8');
        if (startLine === undefined && endLine === undefined) return text;
        // A final newline ends the last line; it does not start another one.
        const lines = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
        const first = startLine ?? 1;
        if (first > lines.length)
          throw new ToolError(`${path} has ${lines.length} lines; startLine ${first} is past the end`);
        return lines.slice(first - 1, endLine ?? lines.length).join('\n');
      });
    },
  });
}
