import { z } from 'zod';
import { canonicalJson } from '../agents/canonical-json.js';
import type { RunTranscript } from './recorded-run.js';

/**
 * One call of a tool-call sequence diff: `kept` (both runs made it, in this order), `removed` (only
 * the recorded run), `added` (only the candidate). Indices count calls across all turns, from 0.
 */
export const CallDiffEntry = z.object({
  change: z.enum(['kept', 'removed', 'added']),
  name: z.string(),
  /** The arguments as canonical JSON (keys sorted), or as written when they are not JSON. */
  arguments: z.string(),
  recordedIndex: z.number().int().nonnegative().optional(),
  candidateIndex: z.number().int().nonnegative().optional(),
});
export type CallDiffEntry = z.infer<typeof CallDiffEntry>;

/** A call as the diff compares it: its tool name and its arguments as canonical JSON. */
interface KeyedCall {
  name: string;
  arguments: string;
  key: string;
}

/** `argumentsJson` as canonical JSON, so `{"a":1,"b":2}` and `{"b":2,"a":1}` compare equal. */
export function canonicalArguments(argumentsJson: string): string {
  try {
    return canonicalJson(JSON.parse(argumentsJson) as unknown);
  } catch {
    // Not JSON (the model wrote garbage): compare as written, never equal to any JSON text.
    return argumentsJson;
  }
}

/** Every call of a transcript, across turns, in the order the model asked for them. */
function keyedCalls(transcript: RunTranscript): KeyedCall[] {
  return transcript.turns.flatMap((turn) =>
    turn.calls.map((call) => {
      const canonical = canonicalArguments(call.argumentsJson);
      // JSON.stringify keeps the pair unambiguous whatever characters the name holds.
      return { name: call.name, arguments: canonical, key: JSON.stringify([call.name, canonical]) };
    }),
  );
}

// Above this many cells the quadratic table is too big; the middle is then shown as removed + added.
const MAX_TABLE_CELLS = 4_000_000;

/**
 * The longest-common-subsequence diff of two runs' tool-call sequences, compared by name and
 * canonical arguments: calls both made in the same relative order are `kept`, the rest `removed`
 * (recorded only) or `added` (candidate only).
 */
export function diffCalls(recorded: RunTranscript, candidate: RunTranscript): CallDiffEntry[] {
  const before = keyedCalls(recorded);
  const after = keyedCalls(candidate);
  let start = 0;
  while (start < before.length && start < after.length && before[start]!.key === after[start]!.key) start++;
  let endBefore = before.length;
  let endAfter = after.length;
  while (endBefore > start && endAfter > start && before[endBefore - 1]!.key === after[endAfter - 1]!.key) {
    endBefore--;
    endAfter--;
  }
  const entries: CallDiffEntry[] = [];
  const kept = (i: number, j: number) =>
    entries.push({ change: 'kept', ...shown(before[i]!), recordedIndex: i, candidateIndex: j });
  const removed = (i: number) => entries.push({ change: 'removed', ...shown(before[i]!), recordedIndex: i });
  const added = (j: number) => entries.push({ change: 'added', ...shown(after[j]!), candidateIndex: j });

  for (let index = 0; index < start; index++) kept(index, index);
  const rows = endBefore - start;
  const columns = endAfter - start;
  if ((rows + 1) * (columns + 1) > MAX_TABLE_CELLS) {
    for (let i = start; i < endBefore; i++) removed(i);
    for (let j = start; j < endAfter; j++) added(j);
  } else {
    // lengths[i][j]: the LCS length of before[start+i..] and after[start+j..], flattened.
    const width = columns + 1;
    const lengths = new Uint32Array((rows + 1) * width);
    for (let i = rows - 1; i >= 0; i--)
      for (let j = columns - 1; j >= 0; j--)
        lengths[i * width + j] =
          before[start + i]!.key === after[start + j]!.key
            ? lengths[(i + 1) * width + j + 1]! + 1
            : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < rows || j < columns) {
      if (i < rows && j < columns && before[start + i]!.key === after[start + j]!.key) {
        kept(start + i++, start + j++);
      } else if (j >= columns || (i < rows && lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!)) {
        removed(start + i++);
      } else {
        added(start + j++);
      }
    }
  }
  for (let offset = 0; offset < before.length - endBefore; offset++)
    kept(endBefore + offset, endAfter + offset);
  return entries;
}

function shown(call: KeyedCall): { name: string; arguments: string } {
  return { name: call.name, arguments: call.arguments };
}

/** The counts of a diff: how many calls were kept, removed and added. */
export function countChanges(entries: readonly CallDiffEntry[]): {
  kept: number;
  removed: number;
  added: number;
} {
  const counts = { kept: 0, removed: 0, added: 0 };
  for (const entry of entries) counts[entry.change]++;
  return counts;
}

const MARKS = { kept: '=', removed: '-', added: '+' } as const;

/**
 * A call in short: `read_file(a.txt)` — its argument values (strings unquoted) joined by `, `, the
 * whole cut to `limit` characters. Not sanitised: a caller that prints it must.
 */
export function shortCall(name: string, argumentsJson: string, limit = 40): string {
  let inner: string;
  try {
    const value = JSON.parse(argumentsJson) as unknown;
    inner =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.values(value as Record<string, unknown>)
            .map((part) => (typeof part === 'string' ? part : JSON.stringify(part)))
            .join(', ')
        : JSON.stringify(value);
  } catch {
    inner = argumentsJson;
  }
  const flat = inner.replace(/\s+/gu, ' ');
  return `${name}(${flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat})`;
}

/**
 * The diff on one line: `= read_file(a.txt) ; - write_file(b.txt, hi) ; + list_dir(.)`, each call
 * marked `=` kept, `-` removed (recorded only) or `+` added (candidate only); `(no calls)` when
 * neither run called a tool.
 */
export function compactCallDiff(entries: readonly CallDiffEntry[]): string {
  if (entries.length === 0) return '(no calls)';
  return entries
    .map((entry) => `${MARKS[entry.change]} ${shortCall(entry.name, entry.arguments)}`)
    .join(' ; ');
}
