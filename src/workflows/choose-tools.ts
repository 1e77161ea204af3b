import type { RunInput } from '../contract/run-input.js';
import type { ToolInfo, WorkerProfile } from '../contract/tool-info.js';
import { invalidInput } from './failures.js';

/**
 * The tools a run offers: the ones it names (all of the worker's, and its agent's sub-agents, when
 * it names none; `runNamesTools` false when `input.tools` is its agent's list, which names no
 * sub-agent). A name the worker does not have, in `tools` or in a per-tool setting, fails the run
 * with the list it has; per-tool settings (timeouts, approvals) do not apply to sub-agents.
 */
export function chooseTools(
  input: RunInput,
  profile: WorkerProfile,
  subAgents: readonly ToolInfo[] = [],
  runNamesTools = true,
): ToolInfo[] {
  const offered = [...profile.tools, ...subAgents];
  const byName = new Map(offered.map((tool) => [tool.name, tool]));
  const refuse = (field: string, names: string[]): never => {
    const available = offered.map((tool) => tool.name).join(', ') || 'no tools';
    throw invalidInput(`${field}: unknown tool(s) ${names.join(', ')}; this worker has ${available}`);
  };
  const missing = (input.tools ?? []).filter((name) => !byName.has(name));
  if (missing.length > 0) refuse('tools', missing);
  // The agent's own tool list narrows the worker's tools, not its sub-agents; the run's own list
  // narrows both.
  const chosen =
    input.tools === undefined
      ? offered
      : [
          ...input.tools.map((name) => byName.get(name) as ToolInfo),
          ...(runNamesTools ? [] : subAgents.filter((tool) => !input.tools!.includes(tool.name))),
        ];
  // Per-tool settings may only name tools the run offers.
  const settings = {
    toolTimeouts: Object.keys(input.toolTimeouts ?? {}),
    approvalTools: input.approvalTools ?? [],
  };
  for (const [field, names] of Object.entries(settings)) {
    const unknown = names.filter(
      (name) => !chosen.some((tool) => tool.name === name && tool.subAgent !== true),
    );
    if (unknown.length > 0) refuse(field, unknown);
  }
  return chosen;
}
