import type { RunResult } from '../contract/run-result.js';
import type { AgentRunArgs } from './arguments.js';
import { endRun } from './end-run.js';
import { asWorkflowFailure } from './failures.js';
import { guardInput } from './guardrails.js';
import { idleStep } from './idle-step.js';
import { setUpRun } from './set-up-run.js';
import { finishStep } from './steps.js';
import type { Step } from './steps.js';
import { turnStep } from './turn-step.js';

/**
 * The agent loop: model turn → tool calls → model turn, until the model answers without calls (a
 * session then waits for the next message), a limit or budget is reached, or a fault ends it.
 * Deterministic: every model turn and tool call is an activity, so all the loop knows is in history
 * and a new worker continues where the old one stopped. At a turn boundary the run continues as new
 * when Temporal suggests it (or after `continueAsNewAfterTurns`), carrying everything in `carried`.
 * Only a `completed` run returns its result; any other ending fails the execution with the result in
 * the failure's details (see `endRun`).
 */
export async function agentRun(...args: AgentRunArgs): Promise<RunResult> {
  try {
    return await runAgent(args);
  } catch (error) {
    throw asWorkflowFailure(error, 'agentRun workflow');
  }
}

async function runAgent(args: readonly unknown[]): Promise<RunResult> {
  const { run, first } = await setUpRun(args);
  // The input guardrails see the task once, before the first turn of the run's first execution.
  const refused = first.kind === 'task' && run.state.turn === 0 ? await guardInput(run) : undefined;
  let step: Step = refused === undefined ? first : finishStep(refused);
  // Bounded: every turn step takes a model turn (the turn limit stops them), and an idle step ends the
  // run, delivers a message, or continues as new.
  for (;;) {
    if (step.kind === 'finish') return endRun(run, step.ending);
    const spent = run.stopBeforeStep({ state: run.state, outOfTime: run.flags.outOfTime });
    if (spent !== undefined) return endRun(run, { status: spent, lastText: run.flags.lastText });
    step = step.kind === 'idle' ? await idleStep(run) : await turnStep(run, step);
  }
}
