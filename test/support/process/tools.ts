import { access, appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool.js';
import type { ToolContext } from '../../../src/tools/define-tool.js';
import { emit } from './events.js';

/** Directory (inside the workspace) where the test drops a file named after a label to release a tool. */
export const RELEASE_DIRECTORY = '.release';

/** The file the `charge` tool appends to: one line per side effect that really happened. */
export const LEDGER_FILE = 'ledger.txt';

/** Waits until the test releases `label` in `directory`, checking every 25 ms; gives up when the signal fires. */
async function waitForRelease(directory: string, label: string, context: ToolContext): Promise<void> {
  const file = path.join(directory, RELEASE_DIRECTORY, label);
  for (;;) {
    context.signal.throwIfAborted();
    try {
      await access(file);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

function identity(context: ToolContext) {
  return { callId: context.callId, idempotencyKey: context.idempotencyKey };
}

/** Blocks until released: the test kills, stops or cancels the worker while it waits. */
const stepTool = (directory: string) =>
  defineTool({
    name: 'step',
    description: 'Do one step of work; it finishes when the test releases it.',
    schema: z.object({ label: z.string() }),
    async execute({ label }, context) {
      emit('tool-started', { tool: 'step', label, ...identity(context) });
      context.signal.addEventListener('abort', () =>
        emit('tool-aborted', { tool: 'step', label, ...identity(context) }),
      );
      await waitForRelease(directory, label, context);
      emit('tool-finished', { tool: 'step', label, ...identity(context) });
      return `done:${label}`;
    },
  });

/** Works for a given time (aborted by its signal): the soak test kills workers at random during it. */
const workTool = defineTool({
  name: 'work',
  description: 'Work for a while.',
  schema: z.object({ label: z.string(), milliseconds: z.number().int().min(0) }),
  async execute({ label, milliseconds }, context) {
    emit('tool-started', { tool: 'work', label, ...identity(context) });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, milliseconds);
      context.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(context.signal.reason as Error);
      });
    });
    emit('tool-finished', { tool: 'work', label, ...identity(context) });
    return `worked:${label}`;
  },
});

/**
 * A side effect made at-most-once with `context.once`: appends to the ledger and returns a receipt.
 * `pause` says where it waits for the test (to be killed there): `inside` the effect, after the
 * ledger line is written but before the result is recorded, or `after` it, once it is recorded.
 */
const chargeTool = (directory: string) =>
  defineTool({
    name: 'charge',
    description: 'Charge a customer once.',
    schema: z.object({ label: z.string(), pause: z.enum(['inside', 'after']) }),
    async execute({ label, pause }, context) {
      emit('tool-started', { tool: 'charge', label, ...identity(context) });
      const receipt = await context.once('charge', async () => {
        await mkdir(directory, { recursive: true });
        await appendFile(path.join(directory, LEDGER_FILE), `${label} ${context.idempotencyKey}\n`);
        emit('effect-done', { label, ...identity(context) });
        if (pause === 'inside') await waitForRelease(directory, label, context);
        return { receipt: `receipt-${label}` };
      });
      emit('charge-recorded', { label, ...identity(context) });
      if (pause === 'after') await waitForRelease(directory, label, context);
      return receipt;
    },
  });

/** Every tool a worker process offers; they keep their files (release marks, the ledger) in `directory`. */
export function processTools(directory: string) {
  return [stepTool(directory), workTool, chargeTool(directory)];
}
