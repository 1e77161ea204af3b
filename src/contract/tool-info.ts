import { z } from 'zod';
import { AgentName, AgentProfile } from './agent-profile.js';
import { ConversationMode, RunBudgets, RunLimits } from './run-input.js';
import { ModelPrice } from './usage.js';

/** What the workflow needs to know about a tool: no code, no schema, just routing metadata. */
export const ToolInfo = z.object({
  name: z.string(),
  description: z.string(),
  /** Has no side effects; may run beside other read-only calls. */
  readOnly: z.boolean(),
  timeoutSeconds: z.number().positive(),
  /**
   * Whether a person must approve a call before it runs: `always`, `conditional` (the tool decides from
   * the arguments, on the worker) or `never`. Absent in older histories: never.
   */
  approval: z.enum(['never', 'always', 'conditional']).optional(),
  /** Calls run as local activities in the workflow's worker (read-only, fast tools only). */
  local: z.boolean().optional(),
  /** The strict JSON Schema of the arguments, for tools that may need approval: edited arguments are checked against it. */
  parameters: z.record(z.string(), z.unknown()).optional(),
  /** The tool is another agent of the worker: a call runs it as a child run (the workflow makes these, never a worker). */
  subAgent: z.literal(true).optional(),
});
export type ToolInfo = z.infer<typeof ToolInfo>;

/** What a worker tells a run about itself once, through an activity, so it is recorded in history. */
export const WorkerProfile = z.object({
  tools: z.array(ToolInfo),
  defaultModel: z.string(),
  /** Limits the worker's operator configured for runs that set none. Absent in older histories. */
  limits: RunLimits.partial().optional(),
  /** Whether Keel's search attributes are registered, so the run may set them. Absent in older histories. */
  searchAttributes: z.boolean().optional(),
  /** Budgets the worker's operator set for runs that set none. Absent in older histories. */
  budgets: RunBudgets.partial().optional(),
  /** How runs that name none keep their conversation (`KEEL_CONVERSATION`); chained when absent. */
  conversation: ConversationMode.optional(),
  /** US dollars per million tokens, by model name, for cost budgets (`KEEL_MODEL_PRICES`). */
  prices: z.record(z.string(), ModelPrice).optional(),
  /** The names of the agents the worker offers. Absent in older histories and on workers without agents. */
  agents: z.array(AgentName).optional(),
  /** The agent the run asked for, when the worker has it. */
  agent: AgentProfile.optional(),
  /**
   * Set when each run's workspace lies on the worker that made it (per-run workspaces, not shared):
   * a run sends its tool calls to that worker's own task queue, and one not picked up there within
   * `failoverSeconds` means that worker, and the workspace with it, is gone.
   */
  workspaceAffinity: z.object({ failoverSeconds: z.number().positive() }).optional(),
});
export type WorkerProfile = z.infer<typeof WorkerProfile>;
