import { compareAnswers } from './answer-match.js';
import type { AnswerMatch } from './answer-match.js';
import { checkAssertions } from './assertions.js';
import type { Expectations } from './assertions.js';
import { compactCallDiff, countChanges, diffCalls } from './call-diff.js';
import type { RunTranscript } from './recorded-run.js';
import type {
  AnswerReport,
  CallsReport,
  CaseReport,
  Change,
  DivergenceReport,
  StopReason,
} from './report.js';

/** One case to compare: the recorded run (none for an inline task), the candidate's, and what it expects. */
export interface CaseToCompare {
  caseId: string;
  recorded?: RunTranscript;
  candidate: RunTranscript;
  expect?: Expectations;
}

/** How a case is compared: the answer `match`, and how long a judge may take (ms). */
export interface CompareOptions {
  match: AnswerMatch;
  judgeTimeoutMs?: number;
}

const DIVERGED = 'KeelError.Diverged';

/**
 * Compares a case's candidate run with its recorded run. It passes when every assertion of `expect`
 * holds; with no assertion that applies, when its answer is the same (by `match`) and it did not
 * diverge — or, for an inline task, when it completed without diverging. A judge's failure fails
 * the case with the reason in `answer.error`; it never throws.
 */
export async function compareCase(entry: CaseToCompare, options: CompareOptions): Promise<CaseReport> {
  const { caseId, recorded, candidate } = entry;
  const answer = await answerReport(caseId, recorded, candidate, options);
  const calls = recorded === undefined ? null : callsReport(recorded, candidate);
  const divergence = divergenceReport(candidate);
  const assertions = checkAssertions(
    entry.expect ?? {},
    candidate,
    answer.same === null || answer.error !== undefined ? {} : { sameAnswer: answer.same },
  );
  const failures: string[] = [];
  if (answer.error !== undefined) failures.push(`answer not compared: ${answer.error}`);
  const applied = assertions.filter((result) => result.result !== 'skipped');
  if (applied.length > 0) {
    for (const result of applied)
      if (result.result === 'failed') failures.push(`${result.assertion}: ${result.detail}`);
  } else {
    if (recorded !== undefined && answer.same === false && answer.error === undefined)
      failures.push(answer.note === undefined ? 'the answer differs' : `the answer differs: ${answer.note}`);
    if (recorded === undefined && candidate.outcome.status !== 'completed')
      failures.push(`did not complete (${candidate.outcome.status})`);
    if (divergence.diverged)
      failures.push(`diverged${divergence.reason === undefined ? '' : `: ${divergence.reason}`}`);
  }
  const turnsBefore = recorded?.turns.length ?? null;
  return {
    caseId,
    task: candidate.task,
    passed: failures.length === 0,
    failures,
    answer,
    calls,
    turns: change(turnsBefore, candidate.turns.length),
    tokens: change(recorded?.usage.totalTokens ?? null, candidate.usage.totalTokens),
    costUsd: change(recorded?.costUsd ?? null, candidate.costUsd ?? null),
    stop: { before: recorded === undefined ? null : stopReason(recorded), after: stopReason(candidate) },
    divergence,
    assertions,
    recorded: recorded ?? null,
    candidate,
  };
}

async function answerReport(
  caseId: string,
  recorded: RunTranscript | undefined,
  candidate: RunTranscript,
  options: CompareOptions,
): Promise<AnswerReport> {
  const kind = typeof options.match === 'function' ? 'judge' : options.match;
  if (recorded === undefined) return { match: kind, same: null };
  const compared = await compareAnswers(caseId, recorded, candidate, options.match, options.judgeTimeoutMs);
  return {
    match: compared.match,
    same: compared.same,
    ...(compared.note === undefined ? {} : { note: compared.note }),
    ...(compared.error === undefined ? {} : { error: compared.error }),
  };
}

function callsReport(recorded: RunTranscript, candidate: RunTranscript): CallsReport {
  const entries = diffCalls(recorded, candidate);
  const counts = countChanges(entries);
  return {
    same: counts.removed === 0 && counts.added === 0,
    ...counts,
    compact: compactCallDiff(entries),
    entries,
  };
}

function divergenceReport(candidate: RunTranscript): DivergenceReport {
  const refusedCalls = candidate.turns
    .flatMap((turn) => turn.calls)
    .filter((call) => call.answer?.ok === false && call.answer.error === 'not_recorded').length;
  if (candidate.outcome.errorType !== DIVERGED) return { diverged: false, refusedCalls };
  const atTurn = candidate.turns.at(-1)?.turn;
  return {
    diverged: true,
    ...(candidate.outcome.reason === undefined ? {} : { reason: candidate.outcome.reason }),
    ...(atTurn === undefined ? {} : { atTurn }),
    refusedCalls,
  };
}

function stopReason(transcript: RunTranscript): StopReason {
  const { status, errorType } = transcript.outcome;
  return errorType === undefined ? { status } : { status, errorType };
}

function change(before: number | null, after: number | null): Change {
  return { before, after, delta: before === null || after === null ? null : after - before };
}
