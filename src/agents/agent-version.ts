import { createHash } from 'node:crypto';
import type { GuardrailNames } from '../contract/guardrail.js';
import type { RunOutput } from '../contract/run-output.js';
import { canonicalJson } from './canonical-json.js';

/** What an agent's version is made of, for each tool it offers. */
export interface VersionedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Hex characters of the sha-256 kept in a version: short enough to read, long enough not to collide. */
const VERSION_LENGTH = 16;

/**
 * The version of an agent: a sha-256 (hex, shortened) of its instructions, of the name,
 * description and JSON Schema of each tool it offers, in the order offered, its output schema, the sub-agents it calls and its guardrails' names. Stable: the same
 * definition gives the same version on every worker; any change to what the model is told changes it.
 */
export function agentVersion(
  instructions: string,
  tools: readonly VersionedTool[],
  output?: RunOutput,
  subAgents: readonly { name: string; description: string }[] = [],
  guardrails?: GuardrailNames,
): string {
  const text = canonicalJson({
    instructions,
    tools: tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
    // Only when declared: the versions of agents without one stay what they were.
    ...(output !== undefined ? { output } : {}),
    ...(subAgents.length > 0 ? { subAgents } : {}),
    ...(guardrails !== undefined ? { guardrails } : {}),
  });
  return createHash('sha256').update(text).digest('hex').slice(0, VERSION_LENGTH);
}
