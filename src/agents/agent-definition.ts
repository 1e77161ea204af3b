import { z } from 'zod';
import { AgentName } from '../contract/agent-profile.js';
import { refuseApprovalsOutsideTools } from '../contract/approval-tools.js';
import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import { MaxOutputTokens, RunBudgets, RunLimits } from '../contract/run-input.js';
import { McpServerList } from '../mcp/server-config.js';
import { RunOutput } from '../contract/run-output.js';
import { AgentGuardrails } from './guardrails.js';
import { structuredOutput } from './structured-output.js';

const toolNames = z
  .array(z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name'))
  .max(128)
  .refine((names) => new Set(names).size === names.length, 'must not repeat a tool');

/**
 * What `defineAgent` takes: a name callers start runs with, the instructions, and the defaults a
 * run uses unless it sets its own (model, tools, approvals, limits, budgets, output cap).
 */
export const AgentDefinition = z
  .strictObject({
    name: AgentName,
    /** For people: what the agent is for. */
    description: z.string().max(1000).optional(),
    instructions: z.string().trim().min(1, 'must say what the agent does').max(200_000),
    /** Model name; the worker's default model when absent. */
    model: z.string().trim().min(1).max(200).optional(),
    /** Names of the worker's tools the agent offers; all of them when absent. */
    tools: toolNames.optional(),
    /** Tools whose calls wait for a person's approval in the agent's runs. */
    approvalTools: toolNames.optional(),
    limits: RunLimits.partial().strict().optional(),
    budgets: RunBudgets.partial().strict().optional(),
    /** Most output tokens a turn of the agent's runs may spend; the worker's `KEEL_MAX_OUTPUT_TOKENS` when absent. */
    maxOutputTokens: MaxOutputTokens.optional(),
    /**
     * MCP servers of this agent's own: the worker starts them with its own, and their tools are
     * offered only in this agent's runs (and named in its version).
     */
    mcpServers: McpServerList.optional(),
    /**
     * Checks of the agent's runs, run on the worker as activities: `input` on the task before the
     * first turn, `output` on the final answer (each may pass, rewrite or trip the run), `toolCalls`
     * on each call before it runs (allow, or deny with a reason the model sees).
     */
    guardrails: AgentGuardrails.optional(),
    /**
     * Other agents of the worker this one may call as tools, by name: each call runs the agent as a
     * child run with the task the model gives it, and its answer is the call's result.
     */
    subAgents: z
      .array(AgentName)
      .max(16)
      .refine((names) => new Set(names).size === names.length, 'must not repeat an agent')
      .optional(),
    /**
     * The shape of the agent's answers, unless a run declares its own: a zod schema of an object, or
     * its JSON form (`RunOutput`, as `structuredOutput` makes it with a name, strictness or retries).
     */
    output: z
      .union([
        z
          .custom<z.ZodType>((value) => value instanceof z.ZodType)
          .transform((schema, context) => {
            try {
              return structuredOutput(schema);
            } catch (error) {
              context.addIssue({ code: 'custom', message: (error as Error).message });
              return z.NEVER;
            }
          }),
        RunOutput,
      ])
      .optional(),
  })
  .superRefine((agent, context) => refuseApprovalsOutsideTools(agent, context, "the agent's"));
export type AgentDefinition = z.input<typeof AgentDefinition>;
