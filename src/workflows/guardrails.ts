import type { GuardrailRequest, GuardrailVerdict } from '../contract/guardrail.js';
import type { Observation } from '../contract/observation.js';
import type { ToolCall } from '../contract/tool-call.js';
import { rethrowIfCancelled } from './cancellation.js';
import { keelActivities } from './keel-activities.js';
import { publish } from './publish.js';
import { stepFailure } from './step-failure.js';
import type { RunContext } from './run-context.js';
import type { Ending } from './steps.js';

type Stage = GuardrailRequest['stage'];

/**
 * Asks the worker to run the agent's guardrails of `stage` (`keel.checkGuardrails`), when the run's
 * agent has any; `undefined` when it has none, and then no activity runs.
 */
async function check(
  run: RunContext,
  stage: Stage,
  subject: { text: string } | { call: { name: string; argumentsJson: string } },
): Promise<GuardrailVerdict | undefined> {
  const names = run.guardrails?.[stage === 'toolCall' ? 'toolCalls' : stage];
  if (run.agent === undefined || names === undefined || names.length === 0) return undefined;
  const { checkGuardrails } = keelActivities(run.names, {
    startToCloseTimeout: '60s',
    retry: { maximumAttempts: 3 },
    summary: `guardrails: ${stage}`,
  });
  return await checkGuardrails({ agent: run.agent.name, stage, ...subject } as GuardrailRequest);
}

/**
 * A stage's check as a step: its verdict, or the run's ending when the check itself failed (a
 * cancelled run goes on being cancelled).
 */
async function checked(
  run: RunContext,
  stage: Stage,
  subject: Parameters<typeof check>[2],
): Promise<{ verdict: GuardrailVerdict | undefined } | { ending: Ending }> {
  try {
    return { verdict: await check(run, stage, subject) };
  } catch (error) {
    rethrowIfCancelled(error, () => publish(run, { status: 'cancelled' }));
    return { ending: stepFailure(`${stage} guardrail check`, error) };
  }
}

/** The ending of a run a guardrail tripped: failed, with the guardrail's name and reason. */
function tripped(stage: 'input' | 'output', verdict: GuardrailVerdict & { verdict: 'trip' }): Ending {
  return {
    status: 'failed',
    errorType: 'KeelError.GuardrailTripped',
    reason: `The ${stage} guardrail ${verdict.guardrail} stopped the run: ${verdict.reason}`,
  };
}

/**
 * The input guardrails on the task, before the first turn: the run ends when one trips, and goes on
 * with the task as they rewrote it.
 */
export async function guardInput(run: RunContext): Promise<Ending | undefined> {
  const result = await checked(run, 'input', { text: run.input.task });
  if ('ending' in result) return result.ending;
  const { verdict } = result;
  if (verdict === undefined) return undefined;
  if (verdict.verdict === 'trip') return tripped('input', verdict);
  if (verdict.text !== undefined) run.input.task = verdict.text;
  return undefined;
}

/** The output guardrails on an answer: the answer as they passed or rewrote it, or the run's ending. */
export async function guardOutput(
  run: RunContext,
  text: string,
): Promise<{ text: string } | { ending: Ending }> {
  const result = await checked(run, 'output', { text });
  if ('ending' in result) return result;
  const { verdict } = result;
  if (verdict === undefined) return { text };
  if (verdict.verdict === 'trip') return { ending: tripped('output', verdict) };
  return { text: verdict.text ?? text };
}

/** The tool-call guardrails on a call before it runs: the observation of a denied call, else `undefined`. */
export async function guardToolCall(run: RunContext, call: ToolCall): Promise<Observation | undefined> {
  const verdict = await check(run, 'toolCall', {
    call: { name: call.name, argumentsJson: call.argumentsJson },
  });
  if (verdict === undefined || verdict.verdict === 'pass') return undefined;
  return {
    callId: call.callId,
    ok: false,
    error: 'rejected',
    message: `The guardrail ${verdict.guardrail} denied this call, so it was not run: ${verdict.reason}`,
  };
}
