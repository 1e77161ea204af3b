import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  makeContinueAsNewFunc,
  ParentClosePolicy,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { AGENT_RUN_WORKFLOW } from '../contract/defaults.js';
import type {
  EvalCaseEnding,
  EvalCaseInput,
  EvalRunInput,
  EvalRunInputArgs,
  EvalRunResult,
  EvalRunState,
} from '../contract/eval-input.js';
import { toFailureType } from '../contract/failure-type-names.js';
import type { FailureType } from '../contract/failure-type.js';
import { formatIssues } from '../contract/format-issues.js';
import { shorten } from '../contract/text.js';
import { evalStateQuery } from './eval-messages.js';
import { check } from './check.js';
import { asWorkflowFailure } from './failures.js';
import { CASE_STATUS, EVAL_CARRIED, EVAL_RUN_INPUT } from './input-plans.js';
import type { CaseStatus, EvalCarried } from './schemas.js';

/** The arguments of `evalRun`: the input, and in an execution that continued as new, the ended cases. */
export type EvalRunArgs = [input: EvalRunInputArgs, carried?: EvalCarried];

/**
 * An eval: one child `agentRun` per case (id `<evalId>.<caseId>`), started in input order with at
 * most `concurrency` running at once, each awaited and its ending recorded. A child that does not
 * complete is an ending like any other (its status and failure type read from the failure); the eval
 * itself completes with every ending. Cancelling the eval cancels its running children (and waits
 * for them to end); a worker lost half-way is replaced by another that replays the history and goes
 * on. When Temporal suggests it (the history grows long), no more cases start, the running ones are
 * awaited, and the eval continues as new carrying the endings, so 10,000 cases fit.
 */
export async function evalRun(...args: EvalRunArgs): Promise<EvalRunResult> {
  try {
    return await runEval(args);
  } catch (error) {
    throw asWorkflowFailure(error, 'evalRun workflow');
  }
}

async function runEval(args: readonly unknown[]): Promise<EvalRunResult> {
  const { input, carried } = parseEvalArguments(args);
  const evalId = workflowInfo().workflowId;
  const endings: EvalCaseEnding[] = carried.ended.map((ended, index) => ({
    ...ended,
    caseId: (input.cases[index] as EvalCaseInput).caseId,
    runId: `${evalId}.${(input.cases[index] as EvalCaseInput).caseId}`,
  }));
  const state: EvalRunState = { total: input.cases.length, running: [], ended: [...endings] };
  setHandler(evalStateQuery, () => state);

  let next = endings.length;
  let draining = false;
  const byIndex = new Map<number, EvalCaseEnding>();
  const runCases = async (): Promise<void> => {
    while (next < input.cases.length && !draining && !CancellationScope.current().consideredCancelled) {
      const index = next++;
      const ending = await runCase(evalId, input.cases[index] as EvalCaseInput, state);
      byIndex.set(index, ending);
      state.ended.push(ending);
      if (workflowInfo().continueAsNewSuggested) draining = true;
    }
  };
  const slots = Math.min(input.concurrency, input.cases.length - next);
  await Promise.all(Array.from({ length: slots }, runCases));
  // The pool started cases in order, so every case before `next` has ended.
  for (let index = endings.length; index < next; index += 1) endings.push(byIndex.get(index)!);

  // Cancelled: the running children were cancelled and awaited, no more start; the eval ends as cancelled.
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('The eval was cancelled');
  if (next < input.cases.length) {
    const ended = endings.map(({ status, errorType }) => ({
      status,
      ...(errorType !== undefined ? { errorType } : {}),
    }));
    return makeContinueAsNewFunc<typeof evalRun>()(input, { ended });
  }
  return { cases: endings };
}

/** Runs one case's child to its end and says how it ended. */
async function runCase(evalId: string, entry: EvalCaseInput, state: EvalRunState): Promise<EvalCaseEnding> {
  const runId = `${evalId}.${entry.caseId}`;
  state.running.push(entry.caseId);
  try {
    const result: unknown = await executeChild(AGENT_RUN_WORKFLOW, {
      workflowId: runId,
      args: [entry.input],
      // Cancelling the eval cancels the case, and the eval hears how it ended; closing it any other
      // way (terminated, or continuing as new, which it does only with no case running) asks the same.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      staticSummary: shorten(`eval ${evalId} · case ${entry.caseId}: ${firstLine(entry.input.task)}`, 200),
    });
    return { caseId: entry.caseId, runId, ...completedEnding(result) };
  } catch (error) {
    return { caseId: entry.caseId, runId, ...failedEnding(error) };
  } finally {
    state.running = state.running.filter((caseId) => caseId !== entry.caseId);
  }
}

type EndingFields = Pick<EvalCaseEnding, 'status' | 'errorType'>;

/** A child that completed: `completed`, unless an old result says otherwise. */
function completedEnding(result: unknown): EndingFields {
  const parsed = check<CaseStatus>(CASE_STATUS, result);
  return parsed.success ? endingFields(parsed.data) : { status: 'completed' };
}

/**
 * A child that failed: a run's ending carries its result in the failure's details (status and, for
 * `failed`, its error type); a refused input or a fault has only the failure's type; a cancelled child
 * is `cancelled`, a terminated or timed-out one `failed`.
 */
function failedEnding(error: unknown): EndingFields {
  if (isCancellation(error)) return { status: 'cancelled' };
  const cause = error instanceof ChildWorkflowFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const parsed = check<CaseStatus>(CASE_STATUS, cause.details?.[0]);
    if (parsed.success && parsed.data.status !== 'completed') return endingFields(parsed.data);
    return { status: 'failed', errorType: toFailureType(cause.type) };
  }
  return { status: 'failed', errorType: 'KeelError.Unexpected' };
}

function endingFields({ status, errorType }: CaseStatus): EndingFields {
  return status === 'failed' ? { status, errorType: errorType ?? 'KeelError.UnknownFailure' } : { status };
}

/**
 * Checks the eval's arguments: a bad input fails the eval with `KeelError.InvalidInput`, never
 * retried. A second argument is taken only from a previous execution of the same eval.
 */
function parseEvalArguments(args: readonly unknown[]): { input: EvalRunInput; carried: EvalCarried } {
  const parsed = check<EvalRunInput>(EVAL_RUN_INPUT, args[0]);
  if (!parsed.success) throw invalidEvalInput(formatIssues(parsed).join('\n'));
  const second = args[1] ?? undefined;
  if (second === undefined) return { input: parsed.data, carried: { ended: [] } };
  if (workflowInfo().continuedFromExecutionRunId === undefined) {
    throw invalidEvalInput('(arguments): evalRun takes one argument, the eval input.');
  }
  const carried = check<EvalCarried>(EVAL_CARRIED, second);
  if (!carried.success || carried.data.ended.length > parsed.data.cases.length) {
    throw invalidEvalInput('(carried state): the endings carried from the previous execution are not valid');
  }
  return { input: parsed.data, carried: carried.data };
}

function invalidEvalInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'KeelError.InvalidInput' satisfies FailureType,
    message: `Invalid eval input:\n${message}`,
    nonRetryable: true,
  });
}

function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0] ?? '';
}
