import { z } from 'zod';
import { TOOL_NAME_PATTERN } from './defaults.js';
import { MaxOutputTokens, RunBudgets, RunLimits } from './run-input.js';
import { GuardrailNames } from './guardrail.js';
import { RunOutput } from './run-output.js';

/** How an agent is named: like a tool (letters, digits, `_`, `-`; at most 64). */
export const AgentName = z.string().regex(TOOL_NAME_PATTERN, 'is not a valid agent name');
export type AgentName = z.infer<typeof AgentName>;

/** Which agent definition a turn ran under: its name, and the version of its instructions and tools. */
export const AgentStamp = z.object({
  name: AgentName,
  /** Short sha-256 hex of the agent's instructions and its tools' JSON Schemas. */
  version: z.string(),
  /** The run gave instructions of its own: the version then stands for the agent's tools only. */
  instructionsOverridden: z.literal(true).optional(),
});
export type AgentStamp = z.infer<typeof AgentStamp>;

/**
 * A named agent as the worker describes it to a run (recorded in history with the worker's profile):
 * what the run uses unless the run input sets its own.
 */
export const AgentProfile = z.object({
  ...AgentStamp.shape,
  instructions: z.string(),
  model: z.string().optional(),
  /** The tools the agent offers; all of the worker's when absent. */
  tools: z.array(z.string()).optional(),
  /** Tools whose calls wait for a person's approval, besides the tools that always ask. */
  approvalTools: z.array(z.string()).optional(),
  limits: RunLimits.partial().optional(),
  budgets: RunBudgets.partial().optional(),
  /** Most output tokens a turn may spend, unless the run sets its own. */
  maxOutputTokens: MaxOutputTokens.optional(),
  /** The shape of the agent's answers (see `RunOutput`), unless the run declares its own. */
  output: RunOutput.optional(),
  /** Other agents of the worker this one offers as tools: a call runs one as a child run (see docs/contract.md, "Sub-agents"). */
  subAgents: z.array(z.object({ name: AgentName, description: z.string() })).optional(),
  /** The names of the agent's guardrails, by stage: the run asks the worker to run them (`keel.checkGuardrails`). */
  guardrails: GuardrailNames.optional(),
});
export type AgentProfile = z.infer<typeof AgentProfile>;
