import type { AgentProfile, AgentStamp } from '../contract/agent-profile.js';
import { RUN_BUDGET_KEYS, RUN_LIMIT_KEYS } from '../contract/run-limits.js';
import type { RunInput } from '../contract/run-input.js';
import type { WorkerProfile } from '../contract/tool-info.js';
import { invalidInput } from './failures.js';

/** A run input with its agent's defaults filled in, and the agent it runs under. */
export interface AgentRunInput {
  input: RunInput;
  agent: AgentStamp | undefined;
}

/**
 * Fills in what the run's agent sets and the run does not: the run's own fields win, then the
 * agent's, then the worker's defaults. Two exceptions keep the agent's rules: a run may narrow the
 * agent's tools but not add to them, and it may add approvals but not drop the agent's. An agent the
 * worker does not have fails the run with the agents it has.
 */
export function applyAgent(input: RunInput, profile: WorkerProfile): AgentRunInput {
  if (input.agent === undefined) return { input, agent: undefined };
  const agent = profile.agent;
  if (agent?.name !== input.agent) {
    const offered = profile.agents?.length ? profile.agents.join(', ') : 'no agents';
    throw invalidInput(`agent: unknown agent ${input.agent}; this worker has ${offered}`);
  }
  const tools = input.tools ?? agent.tools;
  if (input.tools !== undefined && agent.tools !== undefined) {
    const outside = input.tools.filter(
      (name) => !agent.tools!.includes(name) && !(agent.subAgents ?? []).some((sub) => sub.name === name),
    );
    if (outside.length > 0) {
      throw invalidInput(
        `tools: ${outside.join(', ')} not among the tools of agent ${agent.name} (${agent.tools.join(', ') || 'none'})`,
      );
    }
  }
  const approvalTools = [
    ...new Set([
      ...(input.approvalTools ?? []),
      // An approval for a tool this run does not offer would never be asked.
      ...(agent.approvalTools ?? []).filter((name) => tools === undefined || tools.includes(name)),
    ]),
  ];
  const merged: RunInput = {
    ...input,
    ...defaults(agent, input),
    ...(input.instructions === undefined ? { instructions: agent.instructions } : {}),
    ...(input.model === undefined && agent.model !== undefined ? { model: agent.model } : {}),
    ...(input.maxOutputTokens === undefined && agent.maxOutputTokens !== undefined
      ? { maxOutputTokens: agent.maxOutputTokens }
      : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(input.output === undefined && agent.output !== undefined ? { output: agent.output } : {}),
    ...(approvalTools.length > 0 ? { approvalTools } : {}),
  };
  const overridden = input.instructions !== undefined && input.instructions !== agent.instructions;
  return {
    input: merged,
    agent: {
      name: agent.name,
      version: agent.version,
      ...(overridden ? { instructionsOverridden: true } : {}),
    },
  };
}

/**
 * The agent's limits and budgets the run does not set itself (known keys only). A sub-agent's run
 * gets the budgets its parent had left: its agent's own still apply where they are tighter.
 */
function defaults(agent: AgentProfile, input: RunInput): Partial<RunInput> {
  const values: Partial<Record<string, number>> = { ...agent.limits, ...agent.budgets };
  const picked: Partial<Record<string, number>> = {};
  for (const key of [...RUN_LIMIT_KEYS, ...RUN_BUDGET_KEYS]) {
    const own = values[key];
    if (own === undefined) continue;
    const given = input[key];
    if (given === undefined) picked[key] = own;
    else if (input.subAgentDepth !== undefined && RUN_BUDGET_KEYS.includes(key as never))
      picked[key] = Math.min(given, own);
  }
  return picked;
}
