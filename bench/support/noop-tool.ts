import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { NOOP_TOOL } from './bench-model.js';

/** The benchmark tool: does nothing but return `size` characters, so only Keel's own costs are measured. */
export const noopTool = defineTool({
  name: NOOP_TOOL,
  description: 'Does nothing; returns `size` characters.',
  schema: z.object({ size: z.number().int().min(0) }),
  readOnly: true,
  execute: ({ size }) => 'x'.repeat(size),
});

/** The same tool marked `local`: Keel runs its calls as local activities. */
export const localNoopTool = defineTool({
  name: NOOP_TOOL,
  description: 'Does nothing; returns `size` characters.',
  schema: z.object({ size: z.number().int().min(0) }),
  readOnly: true,
  local: true,
  execute: ({ size }) => 'x'.repeat(size),
});
