import { z } from 'zod';
import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import { TranscriptOutcome } from './recorded-run.js';
import type { RunTranscript } from './recorded-run.js';

const ToolName = z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name');

/**
 * What an eval case expects of its candidate run; every field is one assertion, and a case with
 * none passes when its answer is the same and it did not diverge. `answerMatches` is a regular
 * expression when written `/source/flags`, otherwise a plain, case-sensitive substring.
 */
export const Expectations = z.strictObject({
  /** The candidate's answer is (true) or is not (false) the recorded one's, by the eval's `match`. */
  sameAnswer: z.boolean().optional(),
  answerMatches: z
    .string()
    .min(1)
    .max(10_000)
    .superRefine((text, context) => {
      const problem = answerPatternProblem(text);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /** Tools the candidate called at least once (a call refused as not recorded counts: the model asked). */
  calls: z.array(ToolName).max(128).optional(),
  /** Tools the candidate never called. */
  notCalls: z.array(ToolName).max(128).optional(),
  maxTurns: z.number().int().nonnegative().optional(),
  maxCostUsd: z.number().nonnegative().optional(),
  maxTokens: z.number().int().nonnegative().optional(),
  status: TranscriptOutcome.shape.status.optional(),
});
export type Expectations = z.infer<typeof Expectations>;

/** One assertion's result: `skipped` when it cannot apply (`sameAnswer` on an inline task). */
export const AssertionResult = z.object({
  assertion: z.string(),
  result: z.enum(['passed', 'failed', 'skipped']),
  detail: z.string(),
});
export type AssertionResult = z.infer<typeof AssertionResult>;

const REGEX_FORM = /^\/(.*)\/([a-z]*)$/su;

/** The matcher an `answerMatches` text stands for: `/source/flags` a regular expression, else a substring. */
export function answerPattern(text: string): (answer: string) => boolean {
  const regex = REGEX_FORM.exec(text);
  if (regex === null) return (answer) => answer.includes(text);
  // A fresh RegExp per test: `g` and `y` would otherwise carry lastIndex from one answer to the next.
  return (answer) => new RegExp(regex[1]!, regex[2]).test(answer);
}

/** Why `text` is not a usable `answerMatches`, or undefined when it is. */
export function answerPatternProblem(text: string): string | undefined {
  const regex = REGEX_FORM.exec(text);
  if (regex === null) return undefined;
  try {
    new RegExp(regex[1]!, regex[2]);
    return undefined;
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
}

/** The expectations of one case: the file's, with the case's own added (a case's value wins; lists join). */
export function mergeExpectations(
  fileLevel: Expectations | undefined,
  caseLevel: Expectations | undefined,
): Expectations {
  const merged: Expectations = { ...fileLevel, ...caseLevel };
  for (const key of ['calls', 'notCalls'] as const) {
    const joined = [...new Set([...(fileLevel?.[key] ?? []), ...(caseLevel?.[key] ?? [])])];
    if (joined.length > 0) merged[key] = joined;
  }
  return merged;
}

/** What the assertions look at besides the candidate transcript: whether the answer was the same. */
export interface AssertionContext {
  /** Undefined when there is no recorded run (an inline task). */
  sameAnswer?: boolean;
}

/** Every assertion of `expect` checked against the candidate run, in a fixed order. */
export function checkAssertions(
  expect: Expectations,
  candidate: RunTranscript,
  context: AssertionContext,
): AssertionResult[] {
  const results: AssertionResult[] = [];
  const add = (assertion: string, holds: boolean, detail: string) =>
    results.push({ assertion, result: holds ? 'passed' : 'failed', detail });
  if (expect.sameAnswer !== undefined) {
    const assertion = expect.sameAnswer ? 'same answer' : 'different answer';
    if (context.sameAnswer === undefined)
      results.push({ assertion, result: 'skipped', detail: 'an inline task has no recorded answer' });
    else add(assertion, context.sameAnswer === expect.sameAnswer, context.sameAnswer ? 'same' : 'different');
  }
  if (expect.answerMatches !== undefined) {
    const assertion = `answer matches ${expect.answerMatches}`;
    let holds = false;
    let detail: string;
    try {
      holds = answerPattern(expect.answerMatches)(candidate.outcome.text);
      detail = holds ? 'matches' : 'does not match';
    } catch (error) {
      detail = `bad pattern: ${(error as Error).message}`;
    }
    add(assertion, holds, detail);
  }
  const called = new Set(candidate.turns.flatMap((turn) => turn.calls.map((call) => call.name)));
  for (const name of expect.calls ?? [])
    add(`calls ${name}`, called.has(name), called.has(name) ? 'called' : 'never called');
  for (const name of expect.notCalls ?? [])
    add(`never calls ${name}`, !called.has(name), called.has(name) ? 'called' : 'never called');
  if (expect.maxTurns !== undefined)
    add(
      `≤ ${expect.maxTurns} turns`,
      candidate.turns.length <= expect.maxTurns,
      `${candidate.turns.length} turns`,
    );
  if (expect.maxTokens !== undefined)
    add(
      `≤ ${expect.maxTokens} tokens`,
      candidate.usage.totalTokens <= expect.maxTokens,
      `${candidate.usage.totalTokens} tokens`,
    );
  if (expect.maxCostUsd !== undefined) {
    const cost = candidate.costUsd;
    add(
      `cost ≤ $${expect.maxCostUsd}`,
      cost !== undefined && cost <= expect.maxCostUsd,
      cost === undefined ? 'cost unknown (the worker has no price for the model)' : `$${cost}`,
    );
  }
  if (expect.status !== undefined)
    add(`status ${expect.status}`, candidate.outcome.status === expect.status, candidate.outcome.status);
  return results;
}
