// The benchmark's no-op tool as a Keel user adds a tool to the built worker: a tools module
// (`KEEL_TOOLS_MODULE`, `keel worker --tools`) importing `keel` by its package name. It does nothing
// but return `size` characters, so only Keel's own costs are measured. BENCH_NOOP_LOCAL=1 marks
// it `local` (Keel runs its calls as local activities), the one way the bench varies the tool.
import process from 'node:process';
import { defineTool } from 'keel';
import { z } from 'zod';

/** The tools this module gives the worker. */
export const tools = [
  defineTool({
    name: 'noop',
    description: 'Does nothing; returns `size` characters.',
    schema: z.object({ size: z.number().int().min(0) }),
    readOnly: true,
    local: process.env.BENCH_NOOP_LOCAL === '1',
    execute: ({ size }) => 'x'.repeat(size),
  }),
];
