import { z } from 'zod';
import { RunReplay } from './replay.js';
import { RunOutput } from './run-output.js';
import { distinctToolNames, runInputRules } from './rules.js';
import { withRule } from './value-check-plan.js';
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  DEFAULT_MAX_TURNS,
  DEFAULT_MODEL_TIMEOUT_SECONDS,
  DEFAULT_OUTPUT_CAP,
  MAX_SUB_AGENT_DEPTH,
  MAX_TOOL_TIMEOUT_SECONDS,
  MAX_TURNS_LIMIT,
  TOOL_NAME_PATTERN,
} from './defaults.js';

/**
 * The limits of a run. A run input may set each; otherwise the worker's configured default applies
 * (`KEEL_MAX_TURNS` and so on), otherwise {@link DEFAULT_RUN_LIMITS}.
 */
export const RunLimits = z.object({
  maxTurns: z
    .number()
    .int()
    .min(1)
    .max(MAX_TURNS_LIMIT)
    .describe(`Model turns before the run stops with max_turns (default ${DEFAULT_MAX_TURNS}).`),
  observationCharLimit: z
    .number()
    .int()
    .min(100)
    .max(500_000)
    .describe(
      `Characters of one tool output the model sees before it is cut to a preview (default ${DEFAULT_OUTPUT_CAP}).`,
    ),
  modelTimeoutSeconds: z
    .number()
    .min(1)
    .max(3600)
    .describe(`Seconds one model turn may take (default ${DEFAULT_MODEL_TIMEOUT_SECONDS}).`),
  heartbeatTimeoutSeconds: z
    .number()
    .min(1)
    .max(600)
    .describe(
      `Seconds without a heartbeat before an activity is retried on another worker (default ${DEFAULT_HEARTBEAT_SECONDS}).`,
    ),
});
export type RunLimits = z.infer<typeof RunLimits>;

/**
 * What a run may spend. Each is optional (unlimited when neither the run nor the worker sets it);
 * reaching one ends the run with its own status (`max_tokens`, `max_time`, `max_cost`) and the usage so far.
 */
export const RunBudgets = z.object({
  maxTotalTokens: z
    .number()
    .int()
    .min(1)
    .describe('Total tokens (input + output, all turns) after which the run stops with max_tokens.'),
  maxDurationSeconds: z
    .number()
    .min(1)
    .max(366 * 24 * 60 * 60)
    .describe(
      'Wall-clock seconds from the start after which the run stops with max_time; checked between steps and while waiting.',
    ),
  maxCostUsd: z
    .number()
    .positive()
    .describe(
      "US dollars after which the run stops with max_cost; needs the model's price in the worker's KEEL_MODEL_PRICES.",
    ),
});
export type RunBudgets = z.infer<typeof RunBudgets>;

/** Most output tokens one turn may spend, reasoning included (`max_output_tokens`). */
export const MaxOutputTokens = z.number().int().min(16);

/** How a run keeps its conversation: on the model server (`chained`) or itself, sent whole each turn (`stateless`). */
export const ConversationMode = z.enum(['chained', 'stateless']);
export type ConversationMode = z.infer<typeof ConversationMode>;

/** Everything a caller may set when starting a run. Unknown fields are refused, so a typo is an error. */
export const RunInput = withRule(
  z.strictObject({
    task: z
      .string()
      .trim()
      .min(1, 'must describe the task')
      .max(200_000)
      .describe('What the agent should do.'),
    agent: z
      .string()
      .regex(TOOL_NAME_PATTERN, 'is not a valid agent name')
      .optional()
      .describe(
        "A named agent of the worker's: its instructions, model, tools, approvals, limits and budgets apply unless this input sets its own.",
      ),
    instructions: z
      .string()
      .max(200_000)
      .optional()
      .describe('System instructions, re-sent on every turn; a short general-purpose prompt when absent.'),
    model: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("Model name; the worker's KEEL_MODEL when absent."),
    tools: withRule(
      z.array(z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name')).max(128),
      'distinctToolNames',
      distinctToolNames,
    )
      .optional()
      .describe("Names of the worker's tools to offer the model; all of them when absent."),
    toolTimeouts: z
      .record(
        z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name'),
        z.number().min(1).max(MAX_TOOL_TIMEOUT_SECONDS),
      )
      .optional()
      .describe("Seconds each named tool may take in this run, overriding the tool's own timeout."),
    parallelToolCalls: z
      .boolean()
      .default(false)
      .describe('Let the model ask for several calls per turn; read-only ones then run together.'),
    maxOutputTokens: MaxOutputTokens.optional().describe(
      "Most output tokens per turn, reasoning included; the worker's KEEL_MAX_OUTPUT_TOKENS (default 32768) when absent.",
    ),
    reasoningEffort: z
      .enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])
      .optional()
      .describe('Reasoning effort, for reasoning models.'),
    stream: z
      .boolean()
      .optional()
      .describe(
        "Stream each turn's text live to the run's subscribers while it is written (default true, unless the worker has streaming off); false asks the model for whole answers.",
      ),
    approvalTools: z
      .array(z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name'))
      .max(128)
      .optional()
      .describe(
        'Tools whose calls wait for a person to approve them in this run, besides the tools that always ask.',
      ),
    approvalTimeoutSeconds: z
      .number()
      .min(1)
      .max(366 * 24 * 60 * 60)
      .optional()
      .describe(
        'Seconds a call waits for approval before it is refused (the model sees approval_timeout); waits without end when absent.',
      ),
    session: z
      .boolean()
      .default(false)
      .describe(
        'Keep the run open after each answer for follow-up messages (`send`), until it is idle too long.',
      ),
    idleTimeoutSeconds: z
      .number()
      .min(1)
      .max(366 * 24 * 60 * 60)
      .optional()
      .describe(
        `In a session, seconds without a message after an answer before the run ends (default ${DEFAULT_IDLE_TIMEOUT_SECONDS}).`,
      ),
    conversation: ConversationMode.optional().describe(
      "chained: the model server keeps the conversation (previous_response_id). stateless: store=false, the run keeps every item itself (zero data retention). Default: the worker's KEEL_CONVERSATION, else chained.",
    ),
    truncation: z
      .enum(['auto', 'disabled'])
      .optional()
      .describe(
        "When the conversation outgrows the model's context window: auto lets the model server drop items from its middle (the Responses API's truncation), disabled fails the turn. Default: auto in a session, else the server's own (disabled on OpenAI).",
      ),
    continueAsNewAfterTurns: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Model turns per workflow execution before the run continues as new; otherwise only when Temporal suggests it.',
      ),
    output: RunOutput.optional().describe(
      'The shape the final answer must have (a JSON Schema): the model is asked for it, and a completed result carries the checked value as output. See docs/contract.md, "Structured output".',
    ),
    subAgentDepth: z
      .number()
      .int()
      .min(1)
      .max(MAX_SUB_AGENT_DEPTH)
      .optional()
      .describe(
        `Set by Keel on the run of a sub-agent: how deep it nests (1 under a top-level run). A run at depth ${MAX_SUB_AGENT_DEPTH} offers no sub-agents.`,
      ),
    replay: RunReplay.optional().describe(
      "Answer the run's tool calls from a recorded run's (an eval case): see docs/evals.md.",
    ),
    ...RunLimits.partial().shape,
    ...RunBudgets.partial().shape,
  }),
  'runInputRules',
  runInputRules,
);
/** A run input as a caller writes it (defaults optional). */
export type RunInputArgs = z.input<typeof RunInput>;
/** A run input after validation. */
export type RunInput = z.output<typeof RunInput>;

export { DEFAULT_RUN_LIMITS, resolveLimits } from './run-limits.js';
