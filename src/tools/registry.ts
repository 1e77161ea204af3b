import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import type { ToolInfo } from '../contract/tool-info.js';
import { ToolDefinitionError } from './define-tool.js';
import type { Tool } from './define-tool.js';

/** The tools a worker offers, by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: readonly Tool[]) {
    for (const tool of tools) {
      if (!TOOL_NAME_PATTERN.test(tool.name)) {
        throw new ToolDefinitionError(
          `Tool name ${JSON.stringify(tool.name)} is invalid: use 1-64 letters, digits, '_' or '-'`,
        );
      }
      if (this.#tools.has(tool.name)) throw new ToolDefinitionError(`Tool ${tool.name} is registered twice`);
      this.#tools.set(tool.name, tool);
    }
  }

  /** The tool with this name, if any. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Every tool name, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Routing metadata the workflow records in history. */
  describe(): ToolInfo[] {
    return [...this.#tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      readOnly: tool.readOnly,
      timeoutSeconds: tool.timeoutSeconds,
      approval: tool.approval,
      ...(tool.local ? { local: true } : {}),
      // For checking arguments a person edits before approving (any tool may need approval in a run).
      parameters: tool.parameters,
    }));
  }
}
