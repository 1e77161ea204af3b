import type { RunInput } from '../contract/run-input.js';
import type { ToolInfo, WorkerProfile } from '../contract/tool-info.js';
import { invalidInput } from './failures.js';

/**
 * The tools a run offers: the ones it names (all of the worker's when it names none). A name the
 * worker does not have, in `tools` or in a per-tool setting, fails the run with the list it has.
 */
export function chooseTools(input: RunInput, profile: WorkerProfile): ToolInfo[] {
  const byName = new Map(profile.tools.map((tool) => [tool.name, tool]));
  const refuse = (field: string, names: string[]): never => {
    const available = profile.tools.map((tool) => tool.name).join(', ') || 'no tools';
    throw invalidInput(`${field}: unknown tool(s) ${names.join(', ')}; this worker has ${available}`);
  };
  const missing = (input.tools ?? []).filter((name) => !byName.has(name));
  if (missing.length > 0) refuse('tools', missing);
  const chosen =
    input.tools === undefined ? profile.tools : input.tools.map((name) => byName.get(name) as ToolInfo);
  // Per-tool settings may only name tools the run offers.
  const settings = {
    toolTimeouts: Object.keys(input.toolTimeouts ?? {}),
    approvalTools: input.approvalTools ?? [],
  };
  for (const [field, names] of Object.entries(settings)) {
    const unknown = names.filter((name) => !chosen.some((tool) => tool.name === name));
    if (unknown.length > 0) refuse(field, unknown);
  }
  return chosen;
}
