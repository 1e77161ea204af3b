/** An agent definition is malformed, or names tools its worker does not have. */
export class AgentDefinitionError extends Error {
  override name = 'AgentDefinitionError';
}
