import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { deferred } from './deferred.js';

/** Adds two numbers: a tool with a schema a model can get wrong. */
export const addTool = defineTool({
  name: 'add',
  description: 'Add two numbers.',
  schema: z.object({ a: z.number(), b: z.number(), note: z.string().optional() }),
  readOnly: true,
  execute: ({ a, b }) => String(a + b),
});

/** Echoes its text: the simplest successful tool. */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  schema: z.object({ text: z.string() }),
  readOnly: true,
  execute: ({ text }) => `echo: ${text}`,
});

/** Echo as a local tool: it runs as a local activity, without an activity task of its own. */
export const localEchoTool = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  schema: z.object({ text: z.string() }),
  readOnly: true,
  local: true,
  execute: ({ text }) => `echo: ${text}`,
});

/** Fails with a message meant for the model. */
export const knownFailureTool = defineTool({
  name: 'known_failure',
  description: 'Always fails with a known error.',
  schema: z.object({}),
  execute: () => {
    throw new ToolError('the record is locked by another job; try again later');
  },
});

/** Fails with an internal error whose message holds a secret and a worker path. */
export function unknownFailureTool(secret: string) {
  return defineTool({
    name: 'unknown_failure',
    description: 'Always fails with an internal error.',
    schema: z.object({}),
    execute: () => {
      throw new Error(`database password ${secret} rejected at /srv/keel/internal/db.ts:42`);
    },
  });
}

/** Returns more text than any sensible cap. */
export const bigOutputTool = defineTool({
  name: 'big_output',
  description: 'Returns a lot of text.',
  schema: z.object({ characters: z.number().int() }),
  readOnly: true,
  execute: ({ characters }) => 'x'.repeat(characters),
});

/**
 * A tool that blocks until it is aborted (or released), recording what happened, so tests can
 * cancel, time out or kill it mid-call and see the effect.
 */
export function blockingTool(
  options: { name?: string; timeoutSeconds?: number; ignoreAbort?: boolean } = {},
) {
  const started = deferred<{ callId: string; idempotencyKey: string }>();
  const aborted = deferred<unknown>();
  const release = deferred<string>();
  const calls: Array<{ callId: string; idempotencyKey: string }> = [];
  const tool = defineTool({
    name: options.name ?? 'block',
    description: 'Blocks until released.',
    schema: z.object({ label: z.string() }),
    ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
    execute: async ({ label }, { signal, callId, idempotencyKey }) => {
      calls.push({ callId, idempotencyKey });
      started.resolve({ callId, idempotencyKey });
      if (!options.ignoreAbort) {
        signal.addEventListener('abort', () => aborted.resolve(signal.reason), { once: true });
      }
      const outcome = await Promise.race([
        release.promise,
        options.ignoreAbort
          ? new Promise<never>(() => undefined)
          : new Promise<never>((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
            ),
      ]);
      return `${label}: ${outcome}`;
    },
  });
  return { tool, started, aborted, release, calls };
}

/** Deploys a service: a side effect that always needs a person's approval. Records what it ran with. */
export function deployTool() {
  const ran: Array<{ service: string; replicas: number }> = [];
  const tool = defineTool({
    name: 'deploy',
    description: 'Deploy a service.',
    schema: z.object({ service: z.string(), replicas: z.number().int().min(1) }),
    needsApproval: true,
    execute: (input) => {
      ran.push(input);
      return `deployed ${input.service} x${input.replicas}`;
    },
  });
  return { tool, ran };
}
