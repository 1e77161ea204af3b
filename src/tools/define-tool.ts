import type { z } from 'zod';
import {
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  MAX_TOOL_TIMEOUT_SECONDS,
  TOOL_NAME_PATTERN,
} from '../contract/defaults.js';
import { formatIssues } from '../contract/format-issues.js';
import { inputJsonSchema, prepareArguments, StrictSchemaError, toStrictParameters } from './strict-schema.js';
import type { JsonSchema } from './strict-schema.js';

/**
 * What a tool receives beside its parsed input. It holds no file access on purpose: the file tools
 * get their workspace when they are made (`fileTools({ root })`), so no tool can reach around its checks.
 */
export interface ToolContext {
  /** Aborted when the call times out, the run is cancelled, or the worker shuts down. */
  signal: AbortSignal;
  /** The model's `call_id` for this call. */
  callId: string;
  /** Same on every retry of this call, different for every other call: `<workflowId>:<callId>`. */
  idempotencyKey: string;
  /** Reports progress (details redacted, kept by Temporal); also keeps a long tool alive. Cheap to call often. */
  heartbeat(details?: unknown): void;
  /**
   * Runs a side effect at most once for this call, however often the call is retried: a retry gets
   * the first attempt's stored result. `step` names the effect when a tool has several. Throws a
   * `SideEffectInDoubtError` (shown to the model) if an earlier attempt died during the effect.
   * The result is stored with the worker's secrets redacted, and every attempt gets that redacted
   * result: keep values the tool needs afterwards (a secret) out of it.
   */
  once<T>(step: string, effect: () => Promise<T> | T): Promise<T>;
}

/** A tool's return value: text for the model, or any JSON value (sent as JSON text). */
export type ToolOutput =
  string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

/** What a tool author writes; `Output` is what `execute` returns. */
export interface ToolSpec<Schema extends z.ZodObject, Output extends ToolOutput = ToolOutput> {
  /** Name the model calls it by: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** Tells the model when and how to use the tool. */
  description: string;
  /** The input: the model's JSON Schema and the run-time parser both come from it. */
  schema: Schema;
  /** Does the work on the validated input (zod's output: defaults applied, transforms run). */
  execute(input: z.output<Schema>, context: ToolContext): Promise<Output> | Output;
  /** Has no side effects, so it may run beside other read-only calls. Default false. */
  readOnly?: boolean;
  /**
   * Seconds one call may take before it is aborted. Default {@link DEFAULT_TOOL_TIMEOUT_SECONDS}
   * ({@link LOCAL_TOOL_MAX_SECONDS} for a local tool).
   */
  timeoutSeconds?: number;
  /**
   * Whether a person must approve a call before it runs: `true` for every call, or a rule over the
   * validated arguments (`(input) => input.path.startsWith('deploy/')`), run on the worker. The run
   * waits for an `approve` or `reject` update. Default false.
   */
  needsApproval?: boolean | ((input: z.output<Schema>) => boolean | Promise<boolean>);
  /**
   * Run calls as Temporal local activities, inside the workflow's own worker: no activity task round
   * trip, about half the overhead of a step. The price: no heartbeats (a lost worker is noticed after
   * the workflow task timeout, 10 s, and the call runs again), no activity of its own in the Web UI.
   * Only for read-only tools that need no approval and finish within {@link LOCAL_TOOL_MAX_SECONDS}.
   */
  local?: boolean;
}

/** Longest timeout a local tool may have: a local activity holds its workflow task's worker. */
export const LOCAL_TOOL_MAX_SECONDS = 30;

/** The validated input, or why arguments were refused: one `path: message` line per problem. */
export type ArgumentsResult<Input = unknown> = { ok: true; input: Input } | { ok: false; issues: string[] };

/**
 * A defined tool, ready for the registry. `Input` is what `execute` takes (the schema's parsed
 * output), `Output` what it returns. Plain `Tool` is any tool, for registries and lists of mixed tools.
 */
export interface Tool<Input = unknown, Output extends ToolOutput = ToolOutput> {
  readonly name: string;
  readonly description: string;
  readonly readOnly: boolean;
  readonly timeoutSeconds: number;
  /** Strict JSON Schema sent to the model as the function's `parameters`. */
  readonly parameters: JsonSchema;
  /** `always`, `never`, or `conditional` (a rule decides per call with {@link Tool.needsApproval}). */
  readonly approval: 'never' | 'always' | 'conditional';
  /** Whether these validated arguments need a person's approval. */
  needsApproval(input: Input): Promise<boolean>;
  /** Runs as a local activity (see {@link ToolSpec.local}). */
  readonly local: boolean;
  /**
   * Whether {@link Tool.parameters} is a strict schema the model must follow exactly. Always true for
   * zod tools; false for a foreign schema (an MCP server's) that strict mode cannot express.
   */
  readonly strict: boolean;
  /** Validates decoded JSON arguments: nulls for optional fields allowed, undeclared keys refused. */
  parseArguments(value: unknown): ArgumentsResult<Input>;
  // A method, not a function property: its parameter is then bivariant, so every Tool<Input> is a Tool.
  /** Runs the tool on input that {@link Tool.parseArguments} accepted. */
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
}

/** A tool definition is malformed (bad name, unsupported schema, bad timeout). */
export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/** Defines a tool once: the zod schema gives the model's strict JSON Schema and validates its arguments. */
export function defineTool<Schema extends z.ZodObject, Output extends ToolOutput>(
  spec: ToolSpec<Schema, Output>,
): Tool<z.output<Schema>, Output> {
  if (!TOOL_NAME_PATTERN.test(spec.name)) {
    throw new ToolDefinitionError(
      `Tool name ${JSON.stringify(spec.name)} is invalid: use 1-64 letters, digits, '_' or '-'`,
    );
  }
  if (spec.description.trim() === '') throw new ToolDefinitionError(`Tool ${spec.name} needs a description`);
  const timeoutSeconds =
    spec.timeoutSeconds ?? (spec.local === true ? LOCAL_TOOL_MAX_SECONDS : DEFAULT_TOOL_TIMEOUT_SECONDS);
  if (!(timeoutSeconds > 0 && timeoutSeconds <= MAX_TOOL_TIMEOUT_SECONDS)) {
    throw new ToolDefinitionError(
      `Tool ${spec.name}: timeoutSeconds must be a positive number of at most ${MAX_TOOL_TIMEOUT_SECONDS} (a day)`,
    );
  }
  if (spec.local === true) {
    const why =
      spec.readOnly !== true
        ? 'it is not readOnly'
        : spec.needsApproval !== undefined && spec.needsApproval !== false
          ? 'it may need approval'
          : timeoutSeconds > LOCAL_TOOL_MAX_SECONDS
            ? `its timeout is over ${LOCAL_TOOL_MAX_SECONDS} seconds`
            : undefined;
    if (why !== undefined) throw new ToolDefinitionError(`Tool ${spec.name} cannot be local: ${why}`);
  }
  let parameters: JsonSchema;
  let plainSchema: JsonSchema;
  try {
    parameters = toStrictParameters(spec.schema);
    plainSchema = inputJsonSchema(spec.schema);
  } catch (error) {
    const detail =
      error instanceof StrictSchemaError || error instanceof Error ? error.message : String(error);
    throw new ToolDefinitionError(
      `Tool ${spec.name}: schema is not usable for strict function calling: ${detail}`,
    );
  }
  return Object.freeze({
    name: spec.name,
    description: spec.description,
    readOnly: spec.readOnly ?? false,
    timeoutSeconds,
    parameters,
    local: spec.local === true,
    strict: true,
    approval:
      typeof spec.needsApproval === 'function'
        ? 'conditional'
        : spec.needsApproval === true
          ? 'always'
          : 'never',
    needsApproval: async (input: z.output<Schema>): Promise<boolean> => {
      const rule = spec.needsApproval;
      return typeof rule === 'function' ? (await rule(input)) === true : rule === true;
    },
    parseArguments(value: unknown): ArgumentsResult<z.output<Schema>> {
      const prepared = prepareArguments(value, plainSchema);
      const parsed = spec.schema.safeParse(prepared.value);
      const issues = [...(parsed.success ? [] : formatIssues(parsed.error)), ...prepared.unknownKeys];
      return parsed.success && issues.length === 0 ? { ok: true, input: parsed.data } : { ok: false, issues };
    },
    execute: (input: z.output<Schema>, context: ToolContext) => spec.execute(input, context),
  });
}
