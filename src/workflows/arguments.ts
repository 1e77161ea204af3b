import { workflowInfo } from '@temporalio/workflow';
import { formatIssues } from '../contract/format-issues.js';
import type { RunInput, RunInputArgs } from '../contract/run-input.js';
import { check } from './check.js';
import { CARRIED, RUN_INPUT } from './input-plans.js';
import type { Carried } from './schemas.js';
import { invalidInput } from './failures.js';

/**
 * The arguments of `agentRun`: the run input, and in an execution that continued as new, the state
 * the previous execution carried over. Clients pass the input alone.
 */
export type AgentRunArgs = [input: RunInputArgs, carried?: Carried];

/** The checked arguments of one execution. */
export interface RunArguments {
  input: RunInput;
  carried: Carried | undefined;
}

/**
 * Checks everything a client may have sent as arguments; anything the run cannot use fails it with
 * `KeelError.InvalidInput`. A second argument is only taken from a previous execution of the same
 * run (Temporal says whether this execution continued from one), and only if it parses: a client's
 * second `--input` is refused, not mistaken for carried state. `null` (how some SDKs write an absent
 * argument) counts as absent. Without `strict` (replaying a history from before these checks) the
 * carried state is taken as it is, as it was then.
 */
export function parseArguments(args: readonly unknown[], strict: boolean): RunArguments {
  const input = parseInput(args[0]);
  const second = args[1] ?? undefined;
  if (!strict) return { input, carried: second as Carried | undefined };
  let given = args.length;
  while (given > 0 && (args[given - 1] === undefined || args[given - 1] === null)) given -= 1;
  if (given > 2 || (second !== undefined && workflowInfo().continuedFromExecutionRunId === undefined)) {
    throw invalidInput(
      `(arguments): agentRun takes one argument, the run input, but was started with ${given}. ` +
        'Put every field in one JSON object (one `--input` for `temporal workflow start`).',
    );
  }
  if (second === undefined) return { input, carried: undefined };
  const carried = check<Carried>(CARRIED, second);
  if (!carried.success) {
    throw invalidInput(
      `(carried state): the state carried from the previous execution is not valid:\n${formatIssues(carried).join('\n')}`,
    );
  }
  return { input, carried: carried.data };
}

function parseInput(raw: unknown): RunInput {
  const parsed = check<RunInput>(RUN_INPUT, raw);
  if (parsed.success) return parsed.data;
  throw invalidInput(formatIssues(parsed).join('\n'));
}
