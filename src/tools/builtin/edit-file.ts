import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { ToolError } from '../tool-error.js';
import { looksBinary } from './looks-binary.js';

/** Largest file edit_file changes, before and after the edit. */
export const EDIT_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** Line numbers listed in a summary before the rest are elided. */
const LISTED_LINES = 20;

/** Replaces an exact piece of text in a file, leaving every other byte as it was. */
export const editFile = defineTool({
  name: 'edit_file',
  description:
    'Replace an exact piece of text in a file in the workspace. oldText must match the file exactly ' +
    '(whitespace, indentation and line breaks included) and occur once, unless replaceAll is true. ' +
    'The rest of the file stays byte for byte the same. Read the file first; to create a file or ' +
    'replace all of it, use write_file.',
  schema: z.object({
    path: z.string().min(1).describe('File path relative to the workspace root'),
    oldText: z.string().min(1).describe('The exact text to replace, with enough context to be unique'),
    newText: z.string().describe('The text to put in its place (empty to delete it)'),
    replaceAll: z.boolean().default(false).describe('Replace every occurrence instead of exactly one'),
  }),
  readOnly: false,
  timeoutSeconds: 30,
  execute({ path, oldText, newText, replaceAll }, context) {
    const { workspace, signal } = context;
    if (oldText === newText)
      throw new ToolError('oldText and newText are the same; there is nothing to change');
    // Not idempotent: newText may contain oldText, so a retry of an edit that happened must not redo it.
    return context.once('edit', async () => {
      await workspace.resolveForWriting(path);
      const { bytes, stats } = await workspace.readFile(path, {
        maxBytes: EDIT_FILE_MAX_BYTES,
        tool: 'edit_file',
        signal,
      });
      if (looksBinary(bytes)) {
        throw new ToolError(`${path} looks like a binary file; edit_file changes text files only`);
      }
      // Bytes, not decoded text: invalid UTF-8 or a BOM elsewhere in the file must survive untouched.
      const needle = Buffer.from(oldText, 'utf8');
      const positions = occurrences(bytes, needle);
      if (positions.length === 0) throw new ToolError(notFound(path, bytes, oldText));
      if (positions.length > 1 && !replaceAll) {
        throw new ToolError(
          `oldText was found ${positions.length} times in ${path}; add more of the surrounding text to ` +
            `make it unique, or set replaceAll to true to replace all ${positions.length}`,
        );
      }
      const edited = replace(bytes, positions, needle.length, Buffer.from(newText, 'utf8'));
      if (edited.byteLength > EDIT_FILE_MAX_BYTES) {
        throw new ToolError(
          `the edit would make ${path} ${edited.byteLength} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
        );
      }
      await workspace.writeFile(path, edited, { unchangedSince: stats, signal });
      return summary(path, bytes, positions, oldText, newText, edited);
    });
  },
});

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(haystack: Buffer, needle: Buffer): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    found.push(at);
  }
  return found;
}

function replace(bytes: Buffer, positions: number[], length: number, replacement: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const position of positions) {
    parts.push(bytes.subarray(from, position), replacement);
    from = position + length;
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

function notFound(path: string, bytes: Buffer, oldText: string): string {
  const message =
    `oldText was not found in ${path}; read the file again, it may have changed ` +
    '(whitespace, indentation and line breaks must match exactly)';
  const crlf = bytes.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r');
  return crlf
    ? `${message}. The file has CRLF line breaks: write them as \\r\\n in oldText and newText`
    : message;
}

/** "Replaced 1 occurrence in a.ts at line 3 (2 lines became 4); a.ts now has 20 lines." */
function summary(
  path: string,
  original: Buffer,
  positions: number[],
  oldText: string,
  newText: string,
  edited: Buffer,
): string {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (const position of positions) {
    line += countNewlines(original.subarray(scanned, position));
    scanned = position;
    lines.push(line);
  }
  const listed = lines.slice(0, LISTED_LINES).join(', ') + (lines.length > LISTED_LINES ? ', …' : '');
  const where = positions.length === 1 ? `at line ${listed}` : `at lines ${listed}`;
  const before = countLines(oldText);
  const after = newText === '' ? 0 : countLines(newText);
  const each = positions.length === 1 ? '' : ' each';
  const total = countNewlines(edited) + (edited.length > 0 && edited.at(-1) !== 0x0a ? 1 : 0);
  return (
    `Replaced ${plural(positions.length, 'occurrence')} in ${path} ${where} ` +
    `(${plural(before, 'line')} became ${after}${each}); ${path} now has ${plural(total, 'line')}.`
  );
}

function countNewlines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count++;
  return count;
}

/** Lines a piece of text spans; a final newline ends its last line rather than starting another. */
function countLines(text: string): number {
  const parts = text.split('\n').length;
  return text.endsWith('\n') ? parts - 1 : parts;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
