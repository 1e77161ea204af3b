import { z } from 'zod';
import { AssertionResult } from './assertions.js';
import { CallDiffEntry } from './call-diff.js';
import { RunTranscript, TranscriptOutcome } from './recorded-run.js';

/** A number before (the recorded run) and after (the candidate), and after minus before; null when unknown. */
export const Change = z.object({
  before: z.number().nullable(),
  after: z.number().nullable(),
  delta: z.number().nullable(),
});
export type Change = z.infer<typeof Change>;

/** How a run stopped: its outcome status and, for a failed run, its dotted failure type. */
export const StopReason = z.object({
  status: TranscriptOutcome.shape.status,
  errorType: z.string().optional(),
});
export type StopReason = z.infer<typeof StopReason>;

/** Whether the candidate's final answer is the recorded one's; `same` is null for an inline task. */
export const AnswerReport = z.object({
  match: z.enum(['exact', 'normalised', 'judge']),
  same: z.boolean().nullable(),
  /** A judge's note, or why the answers could not be the same (a side did not complete). */
  note: z.string().optional(),
  /** Why the comparison failed (the judge threw or answered garbage): the case then fails. */
  error: z.string().optional(),
});
export type AnswerReport = z.infer<typeof AnswerReport>;

/** The tool-call sequence diff of a case (see `diffCalls`), its counts and its one-line form. */
export const CallsReport = z.object({
  same: z.boolean(),
  kept: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  added: z.number().int().nonnegative(),
  compact: z.string(),
  entries: z.array(CallDiffEntry),
});
export type CallsReport = z.infer<typeof CallsReport>;

/**
 * Whether the candidate left the recording: `diverged` when it ended with `KeelError.Diverged`
 * (`reason` says where), and how many of its calls were refused as not recorded.
 */
export const DivergenceReport = z.object({
  diverged: z.boolean(),
  reason: z.string().optional(),
  /** The candidate's turn the run diverged in. */
  atTurn: z.number().int().positive().optional(),
  refusedCalls: z.number().int().nonnegative(),
});
export type DivergenceReport = z.infer<typeof DivergenceReport>;

/** What comparing one case found: every measure before and after, its assertions, and whether it passed. */
export const CaseReport = z.object({
  caseId: z.string(),
  task: z.string(),
  passed: z.boolean(),
  /** Why it failed, in words, one per reason (empty when it passed). */
  failures: z.array(z.string()),
  answer: AnswerReport,
  /** Null for an inline task: there is no recorded sequence to compare with. */
  calls: CallsReport.nullable(),
  turns: Change,
  tokens: Change,
  costUsd: Change,
  stop: z.object({ before: StopReason.nullable(), after: StopReason }),
  divergence: DivergenceReport,
  assertions: z.array(AssertionResult),
  /** Null for an inline task. */
  recorded: RunTranscript.nullable(),
  candidate: RunTranscript,
});
export type CaseReport = z.infer<typeof CaseReport>;

/** A sum before and after over the cases that know it; null when none does. */
export const Totals = z.object({ before: z.number().nullable(), after: z.number().nullable() });
export type Totals = z.infer<typeof Totals>;

/**
 * An eval's report, exactly what `keel eval --json` prints: every case, and totals. `sameAnswer`
 * counts the cases whose answer was the same; sums before count only cases with a recorded run.
 */
export const EvalReport = z.object({
  cases: z.array(CaseReport),
  totals: z.object({
    cases: z.number().int().nonnegative(),
    passed: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    sameAnswer: z.number().int().nonnegative(),
    diverged: z.number().int().nonnegative(),
    turns: Totals,
    tokens: Totals,
    costUsd: Totals,
  }),
});
export type EvalReport = z.infer<typeof EvalReport>;

/** The report of an eval's cases: the cases as given, and their totals. */
export function summarise(cases: readonly CaseReport[]): EvalReport {
  const sum = (pick: (entry: CaseReport) => Change) => ({
    before: total(cases.map((entry) => pick(entry).before)),
    after: total(cases.map((entry) => pick(entry).after)),
  });
  const passed = cases.filter((entry) => entry.passed).length;
  return {
    cases: [...cases],
    totals: {
      cases: cases.length,
      passed,
      failed: cases.length - passed,
      sameAnswer: cases.filter((entry) => entry.answer.same === true).length,
      diverged: cases.filter((entry) => entry.divergence.diverged).length,
      turns: sum((entry) => entry.turns),
      tokens: sum((entry) => entry.tokens),
      costUsd: sum((entry) => entry.costUsd),
    },
  };
}

function total(values: readonly (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}
