import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { ToolError } from '../tool-error.js';

/** Largest file read_file opens; bigger files need a narrower tool (or a line range, when added). */
export const READ_FILE_MAX_BYTES = 2 * 1024 * 1024;

/** Reads a UTF-8 text file inside the workspace, optionally a range of its lines. */
export const readFile = defineTool({
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
  async execute({ path, startLine, endLine }, { workspace, signal }) {
    if (startLine !== undefined && endLine !== undefined && endLine < startLine) {
      throw new ToolError(`endLine (${endLine}) is before startLine (${startLine})`);
    }
    const absolute = await workspace.resolve(path);
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below then refuses it.
    const handle = await open(absolute, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new ToolError(`${path} is a directory; use list_directory`);
      if (!info.isFile()) throw new ToolError(`${path} is not a regular file`);
      if (info.size > READ_FILE_MAX_BYTES) {
        throw new ToolError(
          `${path} is ${info.size} bytes; read_file opens files up to ${READ_FILE_MAX_BYTES} bytes`,
        );
      }
      const bytes = await handle.readFile({ signal });
      if (bytes.subarray(0, 8192).includes(0)) {
        throw new ToolError(`${path} looks like a binary file (${info.size} bytes); it was not read`);
      }
      const text = bytes.toString('utf8');
      if (startLine === undefined && endLine === undefined) return text;
      // A final newline ends the last line; it does not start another one.
      const lines = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
      const first = startLine ?? 1;
      if (first > lines.length)
        throw new ToolError(`${path} has ${lines.length} lines; startLine ${first} is past the end`);
      return lines.slice(first - 1, endLine ?? lines.length).join('\n');
    } finally {
      await handle.close();
    }
  },
});
