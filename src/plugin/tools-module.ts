import { access } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config-error.js';
import { formatIssues } from '../contract/format-issues.js';
import { z } from 'zod';
import { KeelOptions, ToolValue } from './keel-options.js';

/**
 * What a tools module (`keel worker --tools ./my-tools.js`, `KEEL_TOOLS_MODULE`) gives the worker: its
 * own tools, named agents and MCP servers.
 */
export const ToolsModule = z.strictObject({
  tools: z.array(ToolValue).readonly().optional(),
  agents: KeelOptions.shape.agents,
  mcpServers: KeelOptions.shape.mcpServers,
});
/** The checked exports of a tools module. */
export type ToolsModule = typeof ToolsModule._output;

/** The TypeScript loader, registered once per process. */
let registered: Promise<void> | undefined;

/** What a tools module may export: named exports, or the same names on its default export. */
const EXPORTS = ['tools', 'agents', 'mcpServers'] as const;

/**
 * Loads a module of the operator's own tools: `export const tools = [defineTool(…), …]` (or a default
 * export `{ tools }`). A `.ts` module is compiled on the fly. Everything wrong with it is a
 * `ConfigError` that names the module and the export.
 */
export async function loadToolsModule(specifier: string, cwd: string = process.cwd()): Promise<ToolsModule> {
  const file = path.resolve(cwd, specifier);
  try {
    await access(file);
  } catch {
    throw new ConfigError(`The tools module ${specifier} does not exist (looked for ${file})`);
  }
  if (/\.[mc]?ts$/.test(file)) {
    // Outside the repository the CLI runs compiled code: TypeScript modules need the loader.
    registered ??= import('tsx/esm/api').then(({ register }) => {
      register();
    });
    await registered;
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`The tools module ${specifier} failed to load: ${(error as Error).message}`);
  }
  const source =
    EXPORTS.some((name) => name in loaded) || typeof loaded.default !== 'object' || loaded.default === null
      ? loaded
      : (loaded.default as Record<string, unknown>);
  const exported = Object.fromEntries(
    EXPORTS.filter((name) => name in source).map((name) => [name, source[name]]),
  );
  if (Object.keys(exported).length === 0) {
    throw new ConfigError(
      `The tools module ${specifier} exports none of ${EXPORTS.join(', ')}: ` +
        'export const tools = [defineTool({ … })], agents = [defineAgent({ … })], mcpServers = [{ … }]',
    );
  }
  const parsed = ToolsModule.safeParse(exported);
  if (!parsed.success) {
    throw new ConfigError(
      `The tools module ${specifier} exports something else than Keel expects:\n  ${formatIssues(parsed.error).join('\n  ')}`,
    );
  }
  return parsed.data;
}
