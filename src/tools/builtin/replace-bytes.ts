import type { Pacer } from './pacer.js';

/** Where the first occurrences are, and the edited bytes. */
export interface Replaced {
  bytes: Buffer;
  /** 1-based line numbers of the first `listed` occurrences, in the original. */
  lines: number[];
}

/** Pieces shorter than this are copied in a loop: a native copy costs more than it saves on them. */
const SHORT_COPY = 32;

/**
 * How often `needle` occurs in `haystack`, counting non-overlapping occurrences left to right.
 * Nothing is stored per occurrence: a one-byte needle in a 5 MiB file occurs five million times.
 */
export async function countOccurrences(haystack: Buffer, needle: Buffer, pacer: Pacer): Promise<number> {
  let count = 0;
  for (let at = find(haystack, needle, 0); at !== -1; at = find(haystack, needle, at + needle.length)) {
    count++;
    if (pacer.due()) await pacer.pause();
  }
  return count;
}

/**
 * `haystack` with every occurrence of `needle` replaced, written into a buffer of `size` bytes,
 * which the caller computed (and checked against its limit) from the count before anything is built.
 */
export async function replaceOccurrences(
  haystack: Buffer,
  needle: Buffer,
  replacement: Buffer,
  size: number,
  listed: number,
  pacer: Pacer,
): Promise<Replaced> {
  const bytes = Buffer.allocUnsafe(size);
  const lines: number[] = [];
  let line = 1;
  let written = 0;
  let from = 0;
  for (let at = find(haystack, needle, 0); at !== -1; at = find(haystack, needle, at + needle.length)) {
    if (lines.length < listed) {
      line += countNewlines(haystack, from, at);
      lines.push(line);
      line += countNewlines(needle, 0, needle.length);
    }
    written = copy(haystack, from, at, bytes, written);
    written = copy(replacement, 0, replacement.length, bytes, written);
    from = at + needle.length;
    if (pacer.due()) await pacer.pause();
  }
  written = copy(haystack, from, haystack.length, bytes, written);
  if (written !== size) throw new Error(`replaceOccurrences: built ${written} bytes, expected ${size}`);
  return { bytes, lines };
}

/** Newline bytes in `bytes[from, to)`: a plain loop, faster than indexOf when lines are short. */
export function countNewlines(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let count = 0;
  for (let index = from; index < to; index++) if (bytes[index] === 0x0a) count++;
  return count;
}

function find(haystack: Buffer, needle: Buffer, from: number): number {
  // A single byte is searched as a number: several times faster than a one-byte buffer.
  return needle.length === 1 ? haystack.indexOf(needle[0] ?? 0, from) : haystack.indexOf(needle, from);
}

function copy(source: Buffer, from: number, to: number, target: Buffer, at: number): number {
  if (to - from >= SHORT_COPY) return at + source.copy(target, at, from, to);
  let cursor = at;
  for (let index = from; index < to; index++) target[cursor++] = source[index] ?? 0;
  return cursor;
}
