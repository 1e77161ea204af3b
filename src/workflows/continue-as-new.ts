import {
  allHandlersFinished,
  condition,
  log,
  makeContinueAsNewFunc,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { CARRIED_CONVERSATION_BYTES_LIMIT } from '../contract/defaults.js';
import { cutToBytes } from '../contract/payload.js';
import type { RunResult } from '../contract/run-result.js';
import { RUN_EVENTS_KEPT } from '../contract/defaults.js';
import type { AgentRunArgs } from './arguments.js';
import type { Carried, NextInput } from './schemas.js';
import { publish } from './publish.js';
import type { RunContext } from './run-context.js';
import { keelStatus } from './search-attributes.js';

/**
 * Marks the executions that say they continued: `KeelStatus="continued"` on the one that ends, so
 * no earlier execution keeps saying `running`, and `running` on the next from its start. Histories
 * from before it replay as they ran, continuing without the upsert.
 */
export const CONTINUED_STATUS_PATCH = 'keel-continued-status';

/** Characters of the last text and answer carried across continue-as-new. */
const CARRIED_TEXT_BYTES = 200_000;

/**
 * Whether the run should continue as new at this turn boundary: when Temporal suggests it (the
 * history grows long), or after the run's own `continueAsNewAfterTurns` in this execution.
 */
export function continueAsNewDue(run: RunContext): boolean {
  const { input, state } = run;
  return (
    workflowInfo().continueAsNewSuggested ||
    (input.continueAsNewAfterTurns !== undefined &&
      state.turn - run.turnAtStart >= input.continueAsNewAfterTurns)
  );
}

type AgentRun = (...args: AgentRunArgs) => Promise<RunResult>;

/**
 * Continues the run as a new execution that starts with `next`, carrying everything the state
 * holds; the run input travels unchanged beside it (the next execution asks the worker for its
 * agent again, and its turns record the version they ran under).
 */
export async function continueAsNewNow(run: RunContext, next: NextInput): Promise<never> {
  const { state } = run;
  // Stream waits are released (their subscribers wait again on the next execution), and updates that
  // are mid-way must finish here: the next execution would not know them.
  run.stream?.close();
  await condition(allHandlersFinished);
  log.info('Continuing as new', { turn: state.turn, historyLength: workflowInfo().historyLength });
  const carry: Carried = {
    turn: state.turn,
    toolCalls: state.toolCalls,
    usage: state.usage,
    usageByTurn: state.usageByTurn.slice(-RUN_EVENTS_KEPT),
    lastResponseId: state.lastResponseId,
    lastText: cutToBytes(run.flags.lastText, CARRIED_TEXT_BYTES),
    lastAnswer: state.lastAnswer === null ? null : cutToBytes(state.lastAnswer, CARRIED_TEXT_BYTES),
    answers: state.answers,
    events: state.events,
    continuedAsNew: state.continuedAsNew + 1,
    startedAtMs: run.startedAtMs,
    next,
    queue: run.queue.splice(0),
    ending: run.flags.ending,
    ...(run.flags.outputRetries > 0 ? { outputRetries: run.flags.outputRetries } : {}),
    ...(run.workspace?.queue !== undefined ? { workspaceQueue: run.workspace.queue } : {}),
    ...(run.conversation !== null
      ? { conversation: run.conversation.snapshot(CARRIED_CONVERSATION_BYTES_LIMIT) }
      : {}),
    ...(run.stream !== undefined ? { stream: run.stream.carry() } : {}),
    ...(run.replay !== undefined ? { replayUses: run.replay.uses() } : {}),
  };
  const continued = patched(CONTINUED_STATUS_PATCH) && run.searchAttributes;
  if (!continued) return makeContinueAsNewFunc<AgentRun>()(run.givenInput, carry);
  publish(run, { status: 'continued' });
  // Temporal copies an execution's search attributes to the next one: without this, the next would
  // say `continued` until its first turn. The caller's own attributes travel on unchanged.
  const typedSearchAttributes = workflowInfo().typedSearchAttributes.updateCopy([
    { key: keelStatus, value: 'running' },
  ]);
  return makeContinueAsNewFunc<AgentRun>({ typedSearchAttributes })(run.givenInput, carry);
}
