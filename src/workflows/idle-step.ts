import { condition, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_IDLE_TIMEOUT_SECONDS } from '../contract/defaults.js';
import { rethrowIfCancelled } from './cancellation.js';
import { continueAsNewNow } from './continue-as-new.js';
import { publish } from './publish.js';
import type { RunContext } from './run-context.js';
import { completedEnding } from './output.js';
import { finishStep } from './steps.js';
import type { Step } from './steps.js';

/**
 * A session that has answered waits for the next message, until it is idle too long, ends, runs out
 * of time, or Temporal suggests continuing as new (which it does while idle, at no cost to the wait).
 */
export async function idleStep(run: RunContext): Promise<Step> {
  const { state, queue, flags } = run;
  if (queue.length === 0 && !flags.ending) {
    state.phase = 'idle';
    publish(run, { status: 'idle' });
    let woke: boolean;
    try {
      woke = await condition(
        () => queue.length > 0 || flags.ending || flags.outOfTime || workflowInfo().continueAsNewSuggested,
        `${run.input.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS}s`,
      );
    } catch (error) {
      rethrowIfCancelled(error, () => publish(run, { status: 'cancelled' }));
      throw error;
    }
    if (!woke) return finishStep(completedEnding(run, state.lastAnswer ?? ''));
    // The budget check before the next step ends the run.
    if (flags.outOfTime) return { kind: 'idle' };
    if (queue.length === 0 && !flags.ending) await continueAsNewNow(run, { kind: 'idle' });
    publish(run, { status: 'running' });
  }
  if (queue.length === 0) return finishStep(completedEnding(run, state.lastAnswer ?? ''));
  return { kind: 'messages', previousResponseId: state.lastResponseId };
}
