import type { Tool } from '../tools/define-tool.js';

/** A Responses API function tool, strict mode stated explicitly (false only for foreign schemas). */
export interface FunctionToolParam {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/** What the model is told of a tool: a defined tool, or the metadata of one (an MCP server's). */
export type ToolDescription = Pick<Tool, 'name' | 'description' | 'parameters' | 'strict'>;

/** The `tools` request field for these tools, in the given order. */
/** The function a sub-agent is offered as: it takes the task the model gives it. */
export function subAgentTool(agent: { name: string; description: string }): FunctionToolParam {
  return {
    type: 'function',
    name: agent.name,
    description: `${agent.description} (A sub-agent: it works on the task on its own, with its own tools, and answers.)`,
    parameters: {
      type: 'object',
      properties: {
        task: { type: 'string', description: 'What the sub-agent should do, with all it needs to know.' },
      },
      required: ['task'],
      additionalProperties: false,
    },
    strict: true,
  };
}

export function toResponsesTools(tools: readonly ToolDescription[]): FunctionToolParam[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
  }));
}
