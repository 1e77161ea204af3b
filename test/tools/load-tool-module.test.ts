import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { loadToolModule } from '../../src/tools/load-tool-module.js';
import { ToolRegistry } from '../../src/tools/registry.js';

let directory: string;
let written = 0;
const defineToolUrl = new URL('../../src/tools/define-tool.ts', import.meta.url).href;
const zodUrl = import.meta.resolve('zod');

/** Writes a module into the temporary directory and returns its name there. */
async function moduleFile(name: string, source: string): Promise<string> {
  await writeFile(path.join(directory, name), source);
  return name;
}

const lookup = `
import { z } from '${zodUrl}';
import { defineTool } from '${defineToolUrl}';
export const lookup = defineTool({
  name: 'lookup_order',
  description: 'Look an order up.',
  schema: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => 'order ' + orderId,
});
`;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'keel-tool-module-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('loadToolModule', () => {
  it('loads the tools and agents a module exports by name, relative to the directory given', async () => {
    const file = await moduleFile(
      'named.ts',
      `${lookup}export const tools = [lookup];\nexport const agents = [{ name: 'triage' }];\n`,
    );
    const loaded = await loadToolModule(file, directory);
    expect(loaded.agents).toEqual([{ name: 'triage' }]);
    const registry = new ToolRegistry(loaded.tools);
    expect(registry.names()).toEqual(['lookup_order']);
    expect(registry.get('lookup_order')!.parseArguments({ orderId: 'A1' })).toEqual({
      ok: true,
      input: { orderId: 'A1' },
    });
  });

  it('loads them from a default export too, and takes a module with tools only', async () => {
    const file = await moduleFile('default.ts', `${lookup}export default { tools: [lookup] };\n`);
    const loaded = await loadToolModule(path.join(directory, file));
    expect(loaded.tools.map((tool) => tool.name)).toEqual(['lookup_order']);
    expect(loaded.agents).toEqual([]);
  });

  it.each([
    ['exports neither', 'export const other = 1;', /exports neither `tools` nor `agents`/],
    [
      'exports tools that are not an array',
      `${lookup}export const tools = lookup;`,
      /`tools` must be an array, not an object/,
    ],
    [
      'exports something that is not a tool',
      `${lookup}export const tools = [lookup, { name: 'fake', execute() { return 'x'; } }];`,
      /tools\[1\] is not a tool \(its description is not a string\); make each one with defineTool/,
    ],
    [
      'exports a string as a tool',
      `export const tools = ['read_file'];`,
      /tools\[0\] is not a tool \(it is a string\)/,
    ],
    ['throws while it loads', `throw new Error('no database');`, /could not be loaded: no database/],
  ])('refuses a module that %s, naming the file', async (_, source, message) => {
    const file = await moduleFile(`bad-${++written}.ts`, source);
    const loading = loadToolModule(file, directory);
    await expect(loading).rejects.toThrow(ConfigError);
    await expect(loading).rejects.toThrow(message);
    await expect(loading).rejects.toThrow(file);
  });

  it('refuses a file that does not exist, and an empty path', async () => {
    await expect(loadToolModule('missing.js', directory)).rejects.toThrow(
      /The tool module missing.js could not be loaded/,
    );
    await expect(loadToolModule(' ', directory)).rejects.toThrow(/path is empty/);
  });
});
