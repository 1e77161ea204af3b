import { ApplicationFailure } from '@temporalio/common';
import type { FailureType } from '../contract/failure-type.js';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import { outputJsonText } from '../contract/text.js';
import { compileArgumentValidator } from '../mcp/argument-validator.js';
import type { ArgumentValidator } from '../mcp/argument-validator.js';

/** Compiled output schemas kept, by their JSON: runs of one agent share one. */
const CACHED = 64;
const validators = new Map<string, ArgumentValidator>();

/**
 * The checker of a run's output schema, compiled once per schema. A schema that is not valid JSON
 * Schema fails the turn before the model is asked (`KeelError.InvalidInput`, not retried): no
 * answer could ever be checked against it.
 */
export function outputValidator(schema: Readonly<Record<string, unknown>>): ArgumentValidator {
  const key = JSON.stringify(schema);
  const cached = validators.get(key);
  if (cached !== undefined) return cached;
  let validator: ArgumentValidator;
  try {
    validator = compileArgumentValidator(schema, schema.$schema);
  } catch (error) {
    throw ApplicationFailure.create({
      type: 'KeelError.InvalidInput' satisfies FailureType,
      message: `output.schema is not a valid JSON Schema: ${(error as Error).message}`,
      nonRetryable: true,
    });
  }
  if (validators.size >= CACHED) validators.delete(validators.keys().next().value!);
  validators.set(key, validator);
  return validator;
}

/**
 * The turn with its answer checked against the run's output schema, when the run declared one and
 * the turn answered (no calls, not cut off): `outputIssues` lists the problems, none when it matches.
 */
export function withOutputIssues(turn: ModelTurn, request: ModelRequest): ModelTurn {
  if (request.output === undefined || turn.toolCalls.length > 0 || turn.status !== 'completed') return turn;
  const validate = outputValidator(request.output.schema);
  let value: unknown;
  try {
    value = JSON.parse(outputJsonText(turn.text));
  } catch (error) {
    return {
      ...turn,
      outputIssues: [
        turn.text.trim() === ''
          ? '(root): the answer is empty, not a JSON value'
          : `(root): the answer is not JSON (${(error as Error).message})`,
      ],
    };
  }
  return { ...turn, outputIssues: validate(value) };
}
