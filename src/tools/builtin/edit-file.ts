import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { ToolError } from '../tool-error.js';
import { looksBinary } from './looks-binary.js';
import { Pacer } from './pacer.js';
import { countNewlines, countOccurrences, replaceOccurrences } from './replace-bytes.js';
import type { Replaced } from './replace-bytes.js';

/** Largest file edit_file changes, before and after the edit. */
export const EDIT_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** Line numbers listed in a summary before the rest are elided. */
const LISTED_LINES = 20;

/** `edit_file` for the workspace of `source`: replaces an exact piece of text, leaving every other byte as it was. */
export function createEditFileTool(source: WorkspaceSource) {
  const open = workspaceOpener(source);
  return defineTool({
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
      const { signal } = context;
      return inWorkspace(open, async (workspace) => {
        if (oldText === newText)
          throw new ToolError('oldText and newText are the same; there is nothing to change');
        for (const [name, text] of [
          ['oldText', oldText],
          ['newText', newText],
        ] as const) {
          const bytes = Buffer.byteLength(text, 'utf8');
          if (bytes > EDIT_FILE_MAX_BYTES) {
            throw new ToolError(
              `${name} is ${bytes} bytes; edit_file changes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
            );
          }
        }
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
          const replacement = Buffer.from(newText, 'utf8');
          // Long loops over a file of millions of matches give the event loop turns (heartbeats go on).
          const pacer = new Pacer(signal);
          const count = await countOccurrences(bytes, needle, pacer);
          if (count === 0) throw new ToolError(notFound(path, bytes, oldText));
          if (count > 1 && !replaceAll) {
            throw new ToolError(
              `oldText was found ${count} times in ${path}; add more of the surrounding text to ` +
                `make it unique, or set replaceAll to true to replace all ${count}`,
            );
          }
          // The size follows from the count: refuse before building anything (the result may be gigabytes).
          const size = bytes.byteLength + count * (replacement.byteLength - needle.byteLength);
          if (size > EDIT_FILE_MAX_BYTES) {
            throw new ToolError(
              `the edit would make ${path} ${size} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
            );
          }
          const edited = await replaceOccurrences(bytes, needle, replacement, size, LISTED_LINES, pacer);
          await workspace.writeFile(path, edited.bytes, { unchangedSince: stats, signal });
          return summary(path, { original: bytes, needle, replacement, count, edited });
        });
      });
    },
  });
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
  edit: { original: Buffer; needle: Buffer; replacement: Buffer; count: number; edited: Replaced },
): string {
  const { original, needle, replacement, count, edited } = edit;
  const listed = edited.lines.join(', ') + (count > edited.lines.length ? ', …' : '');
  const where = count === 1 ? `at line ${listed}` : `at lines ${listed}`;
  const before = countLines(needle);
  const after = countLines(replacement);
  const each = count === 1 ? '' : ' each';
  // Counted from the parts rather than the result: each occurrence swaps its newlines for newText's.
  const newlines = countNewlines(original) + count * (countNewlines(replacement) - countNewlines(needle));
  const total = newlines + (edited.bytes.length > 0 && edited.bytes.at(-1) !== 0x0a ? 1 : 0);
  return (
    `Replaced ${plural(count, 'occurrence')} in ${path} ${where} ` +
    `(${plural(before, 'line')} became ${after}${each}); ${path} now has ${plural(total, 'line')}.`
  );
}

/** Lines a piece of text spans; a final newline ends its last line rather than starting another. */
function countLines(text: Buffer): number {
  if (text.length === 0) return 0;
  return countNewlines(text) + (text.at(-1) === 0x0a ? 0 : 1);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
