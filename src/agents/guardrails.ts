import { z } from 'zod';
import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import type { GuardrailNames, GuardrailRequest, GuardrailVerdict } from '../contract/guardrail.js';

/** What a run's guardrail knows of the run. */
export interface GuardrailContext {
  agent: string;
  runId: string;
}

/** A check's answer on a text: let it pass, pass it rewritten, or trip the run with a reason the caller sees. */
export type TextGuardrailResult =
  { action: 'pass' } | { action: 'rewrite'; text: string } | { action: 'trip'; reason: string };

/** A check's answer on a tool call: let it run, or deny it with a reason the model sees. */
export type ToolCallGuardrailResult = { action: 'allow' } | { action: 'deny'; reason: string };

/** An input or output check of an agent's runs: the task before the first turn, or the final answer. */
export interface TextGuardrail {
  name: string;
  check(text: string, context: GuardrailContext): TextGuardrailResult | Promise<TextGuardrailResult>;
}

/** A check of each tool call an agent's model asks for, before it runs (and before any approval). */
export interface ToolCallGuardrail {
  name: string;
  check(
    call: { name: string; arguments: unknown },
    context: GuardrailContext,
  ): ToolCallGuardrailResult | Promise<ToolCallGuardrailResult>;
}

const guardrail = <T>() =>
  z.custom<T>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { name?: unknown }).name === 'string' &&
      TOOL_NAME_PATTERN.test((value as { name: string }).name) &&
      typeof (value as { check?: unknown }).check === 'function',
    { message: 'must be { name, check } with a name of letters, digits, _ or - and a check function' },
  );

const distinct = <T extends { name: string }>(list: readonly T[]) =>
  new Set(list.map((entry) => entry.name)).size === list.length;

/** An agent's guardrails, by stage, run in the order given; the first to trip decides. */
export const AgentGuardrails = z.strictObject({
  input: z.array(guardrail<TextGuardrail>()).max(16).refine(distinct, 'must not repeat a name').optional(),
  output: z.array(guardrail<TextGuardrail>()).max(16).refine(distinct, 'must not repeat a name').optional(),
  toolCalls: z
    .array(guardrail<ToolCallGuardrail>())
    .max(16)
    .refine(distinct, 'must not repeat a name')
    .optional(),
});
export type AgentGuardrails = z.output<typeof AgentGuardrails>;

/** The names a run learns (in the agent's profile, and so in its version). */
export function guardrailNames(guardrails: AgentGuardrails | undefined): GuardrailNames | undefined {
  if (guardrails === undefined) return undefined;
  const names: GuardrailNames = {};
  for (const stage of ['input', 'output', 'toolCalls'] as const) {
    const list = guardrails[stage];
    if (list !== undefined && list.length > 0) names[stage] = list.map((entry) => entry.name);
  }
  return Object.keys(names).length > 0 ? names : undefined;
}

/**
 * Runs an agent's guardrails of one stage, in order: a text flows through the rewrites, the first
 * trip (or denial) decides. A check that throws trips (fails closed); `onError` hears why.
 */
export async function runGuardrails(
  guardrails: AgentGuardrails | undefined,
  request: GuardrailRequest,
  context: GuardrailContext,
  onError: (name: string, error: unknown) => void,
): Promise<GuardrailVerdict> {
  if (request.stage === 'toolCall') {
    let args: unknown;
    try {
      args = JSON.parse(request.call.argumentsJson);
    } catch {
      args = request.call.argumentsJson;
    }
    for (const entry of guardrails?.toolCalls ?? []) {
      const result = await settled(
        entry.name,
        () => entry.check({ name: request.call.name, arguments: args }, context),
        ToolCallResult,
        onError,
      );
      if (result === undefined) return { verdict: 'trip', guardrail: entry.name, reason: 'the check failed' };
      if (result.action === 'deny') return { verdict: 'trip', guardrail: entry.name, reason: result.reason };
    }
    return { verdict: 'pass' };
  }
  let text = request.text;
  let rewritten = false;
  for (const entry of guardrails?.[request.stage] ?? []) {
    const result = await settled(entry.name, () => entry.check(text, context), TextResult, onError);
    if (result === undefined) return { verdict: 'trip', guardrail: entry.name, reason: 'the check failed' };
    if (result.action === 'trip') return { verdict: 'trip', guardrail: entry.name, reason: result.reason };
    if (result.action === 'rewrite') {
      text = result.text;
      rewritten = true;
    }
  }
  return rewritten ? { verdict: 'pass', text } : { verdict: 'pass' };
}

const TextResult = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('pass') }),
  z.strictObject({ action: z.literal('rewrite'), text: z.string() }),
  z.strictObject({ action: z.literal('trip'), reason: z.string() }),
]);
const ToolCallResult = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('allow') }),
  z.strictObject({ action: z.literal('deny'), reason: z.string() }),
]);

/**
 * What a check answered, when it is one of the answers it may give; `undefined` (the caller trips)
 * when it threw or answered anything else: a guardrail fails closed.
 */
async function settled<T>(
  name: string,
  check: () => unknown,
  shape: z.ZodType<T>,
  onError: (name: string, error: unknown) => void,
): Promise<T | undefined> {
  try {
    const answer: unknown = await check();
    const parsed = shape.safeParse(answer);
    if (parsed.success) return parsed.data;
    onError(
      name,
      new TypeError(`it answered ${JSON.stringify(answer) ?? String(answer)}, not one of its answers`),
    );
  } catch (error) {
    onError(name, error);
  }
  return undefined;
}
