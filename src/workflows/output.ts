import { DEFAULT_OUTPUT_RETRIES } from '../contract/defaults.js';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import { outputJsonText, shorten } from '../contract/text.js';
import type { RunContext } from './run-context.js';
import type { Ending } from './steps.js';

/** What a turn's request says of the run's output schema (`text.format`), for a run with one. */
export function requestedOutput(run: RunContext): Pick<ModelRequest, 'output'> {
  const output = run.input.output;
  if (output === undefined) return {};
  return {
    output: {
      name: output.name,
      schema: output.schema,
      ...(output.strict !== undefined ? { strict: output.strict } : {}),
    },
  };
}

/**
 * What to do with an answer of a run with an output schema: `accept` it, send it back to the model
 * with its problems (`retry`, the message to send), or end the run (`fail`). Every answer of a run
 * without one is accepted.
 */
export function judgeAnswer(
  run: RunContext,
  turn: ModelTurn,
): { kind: 'accept' } | { kind: 'retry'; message: string } | { kind: 'fail'; ending: Ending } {
  const output = run.input.output;
  if (output === undefined) return { kind: 'accept' };
  const issues =
    turn.outputIssues ?? (parsed(turn.text) === undefined ? ['(root): the answer is not JSON'] : []);
  if (issues.length === 0) {
    run.flags.outputRetries = 0;
    return { kind: 'accept' };
  }
  const retries = output.retries ?? DEFAULT_OUTPUT_RETRIES;
  const problems = issues.map((issue) => `- ${shorten(issue, 300)}`).join('\n');
  if (run.flags.outputRetries >= retries) {
    return {
      kind: 'fail',
      ending: {
        status: 'failed',
        errorType: 'KeelError.InvalidOutput',
        reason:
          `The model's answer does not match the output schema "${output.name}" ` +
          `${retries === 0 ? 'and no retry was allowed' : `after ${retries} ${retries === 1 ? 'retry' : 'retries'}`}:\n${problems}`,
      },
    };
  }
  run.flags.outputRetries += 1;
  return {
    kind: 'retry',
    message:
      `Your answer does not match the required output schema "${output.name}":\n${problems}\n` +
      'Answer again with only the JSON value, matching the schema.',
  };
}

/**
 * A `completed` ending with `text` as the final answer, and its value for a run with an output
 * schema; a run whose answer is no longer JSON (an output guardrail rewrote it) fails instead of
 * completing without its output.
 */
export function completedEnding(run: RunContext, text: string): Ending {
  if (run.input.output === undefined) return { status: 'completed', finalText: text };
  const value = parsed(text);
  if (value === undefined)
    return {
      status: 'failed',
      errorType: 'KeelError.InvalidOutput',
      reason: `The final answer is not JSON for the output schema "${run.input.output.name}" (an output guardrail may have rewritten it).`,
    };
  return { status: 'completed', finalText: text, output: value.value };
}

function parsed(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(outputJsonText(text)) as unknown };
  } catch {
    return undefined;
  }
}
