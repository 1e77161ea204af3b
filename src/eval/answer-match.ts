import { firstLine, JudgeVerdict } from './judge.js';
import type { Judge } from './judge.js';
import type { RunTranscript } from './recorded-run.js';

/** How two final answers are compared: exactly, normalised (see {@link normaliseAnswer}), or by a judge. */
export type AnswerMatch = 'exact' | 'normalised' | Judge;

/** What comparing two answers found: `same`, a judge's note, or why it could not tell (`error`). */
export interface AnswerComparison {
  match: 'exact' | 'normalised' | 'judge';
  same: boolean;
  note?: string;
  error?: string;
}

/**
 * An answer reduced to what a person would call its content: Unicode NFC, case-folded (upper- then
 * lower-cased, so `ß` and `SS` agree), every run of whitespace one space, trimmed, and trailing
 * punctuation (`.`, `!`, `?`, `…`, closing quotes and the like) dropped.
 */
export function normaliseAnswer(text: string): string {
  return text
    .normalize('NFC')
    .toUpperCase()
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[\p{P}\s]+$/u, '');
}

/** How long a judge may take for one case before its answer counts as an error. */
export const JUDGE_TIMEOUT_MS = 60_000;

/**
 * Whether the candidate's final answer is the recorded one's. Only completed runs have a final
 * answer: when either side did not complete, they are not the same (and the judge is not asked).
 * A judge that throws, times out or answers something other than a boolean or `{ same, note? }`
 * gives an `error`, never an exception.
 */
export async function compareAnswers(
  caseId: string,
  recorded: RunTranscript,
  candidate: RunTranscript,
  match: AnswerMatch,
  judgeTimeoutMs = JUDGE_TIMEOUT_MS,
): Promise<AnswerComparison> {
  const kind = typeof match === 'function' ? 'judge' : match;
  for (const [side, transcript] of [
    ['recorded', recorded],
    ['candidate', candidate],
  ] as const)
    if (transcript.outcome.status !== 'completed')
      return {
        match: kind,
        same: false,
        note: `the ${side} run did not complete (${transcript.outcome.status})`,
      };
  const before = recorded.outcome.text;
  const after = candidate.outcome.text;
  if (match === 'exact') return { match: kind, same: before === after };
  if (match === 'normalised')
    return { match: kind, same: normaliseAnswer(before) === normaliseAnswer(after) };
  let verdict: unknown;
  try {
    verdict = await withTimeout(
      Promise.resolve().then(() =>
        match({ caseId, task: candidate.task, recorded: before, candidate: after }),
      ),
      judgeTimeoutMs,
    );
  } catch (error) {
    return { match: kind, same: false, error: `the judge threw: ${firstLine(error)}` };
  }
  const parsed = JudgeVerdict.safeParse(verdict);
  if (!parsed.success)
    return {
      match: kind,
      same: false,
      error: `the judge answered ${preview(verdict)}, not a boolean or { same: boolean, note?: string }`,
    };
  if (typeof parsed.data === 'boolean') return { match: kind, same: parsed.data };
  return parsed.data.note === undefined
    ? { match: kind, same: parsed.data.same }
    : { match: kind, same: parsed.data.same, note: parsed.data.note };
}

async function withTimeout<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${milliseconds / 1000} s`)), milliseconds);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function preview(value: unknown): string {
  if (value === undefined) return 'undefined';
  let text: string;
  try {
    text = JSON.stringify(value) ?? typeof value;
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
