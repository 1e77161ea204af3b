import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config-error.js';
import type { Tool } from './define-tool.js';

/** What a module named to the worker (`keel worker --tools ./my-tools.js`) offers. */
export interface ToolModule {
  /** Its tools, checked to be tools (made by `defineTool`, or of the same shape). */
  tools: readonly Tool[];
  /** Its agent definitions, as exported: the caller checks them against the agent schema. */
  agents: readonly unknown[];
}

/**
 * Imports the module at `file` (relative to `from`, the working directory by default) and returns
 * the `tools` and `agents` it exports, as named exports or as properties of its default export.
 * Every way it can be wrong is a {@link ConfigError} naming the file and what to change.
 */
export async function loadToolModule(file: string, from: string = process.cwd()): Promise<ToolModule> {
  if (file.trim() === '') throw new ConfigError('The tool module path is empty: give the path of a .js file');
  const absolute = path.resolve(from, file);
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(
      `The tool module ${file} could not be loaded: ${(error as Error).message ?? error}`,
    );
  }
  const fallback = isRecord(exports.default) ? exports.default : {};
  const tools = exports.tools ?? fallback.tools;
  const agents = exports.agents ?? fallback.agents;
  if (tools === undefined && agents === undefined) {
    throw new ConfigError(
      `The tool module ${file} exports neither \`tools\` nor \`agents\`: add \`export const tools = [myTool]\` ` +
        '(tools made with defineTool) or `export const agents = [...]`',
    );
  }
  return { tools: checkTools(file, tools ?? []), agents: checkList(file, 'agents', agents ?? []) };
}

function checkTools(file: string, tools: unknown): Tool[] {
  return checkList(file, 'tools', tools).map((tool, index) => {
    const problem = toolProblem(tool);
    if (problem !== undefined) {
      throw new ConfigError(
        `The tool module ${file}: tools[${index}] is not a tool (${problem}); make each one with defineTool`,
      );
    }
    return tool as Tool;
  });
}

function checkList(file: string, name: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) {
    throw new ConfigError(`The tool module ${file}: \`${name}\` must be an array, not ${describe(value)}`);
  }
  return value as unknown[];
}

/** Why `value` cannot be a registered tool, or undefined when it has a tool's shape. */
function toolProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return `it is ${describe(value)}`;
  const shape: Record<string, string> = {
    name: 'string',
    description: 'string',
    readOnly: 'boolean',
    timeoutSeconds: 'number',
    local: 'boolean',
    strict: 'boolean',
    parameters: 'object',
    needsApproval: 'function',
    parseArguments: 'function',
    execute: 'function',
  };
  for (const [key, type] of Object.entries(shape)) {
    if (typeof value[key] !== type || value[key] === null) return `its ${key} is not a ${type}`;
  }
  if (!['never', 'always', 'conditional'].includes(value.approval as string))
    return 'its approval is not known';
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
