import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import type { ToolInfo } from '../contract/tool-info.js';
import { ToolDefinitionError } from './define-tool.js';
import type { Tool } from './define-tool.js';

/** Tools that may change while the worker runs (an MCP server's), listed again by {@link refresh}. */
export interface ToolSource {
  /** The tools of the last listing. */
  current(): readonly Tool[];
  /** Lists the tools again; keeps the last listing when that fails. */
  refresh(): Promise<void>;
}

/** The tools a worker offers, by name: its own, then those of its sources (MCP servers). */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly #sources: readonly ToolSource[];

  constructor(tools: readonly Tool[], sources: readonly ToolSource[] = []) {
    this.#sources = sources;
    const seen = new Set<string>();
    // The sources' first listing is checked with the worker's own tools: a clash is refused at start.
    for (const tool of [...tools, ...sources.flatMap((source) => source.current())]) {
      if (!TOOL_NAME_PATTERN.test(tool.name)) {
        throw new ToolDefinitionError(
          `Tool name ${JSON.stringify(tool.name)} is invalid: use 1-64 letters, digits, '_' or '-'`,
        );
      }
      if (seen.has(tool.name)) throw new ToolDefinitionError(`Tool ${tool.name} is registered twice`);
      seen.add(tool.name);
    }
    for (const tool of tools) this.#tools.set(tool.name, tool);
  }

  /** The tool with this name, if any: the worker's own first, then the sources' last listings. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name) ?? this.#fromSources().find((tool) => tool.name === name);
  }

  /** Every tool name, in registration order. */
  names(): string[] {
    return this.#all().map((tool) => tool.name);
  }

  /** Lists the sources' tools again (once per run, so a run sees what its servers offer now). */
  async refresh(): Promise<void> {
    await Promise.all(this.#sources.map((source) => source.refresh()));
  }

  /** Routing metadata the workflow records in history. */
  describe(): ToolInfo[] {
    return this.#all().map((tool) => ({
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

  /** The sources' tools, without those a worker's own tool of the same name shadows. */
  #fromSources(): Tool[] {
    return this.#sources.flatMap((source) => source.current()).filter((tool) => !this.#tools.has(tool.name));
  }

  #all(): Tool[] {
    return [...this.#tools.values(), ...this.#fromSources()];
  }
}
