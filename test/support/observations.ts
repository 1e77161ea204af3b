import type { Observation } from '../../src/contract/observation.js';

/** The observation of a successful call `call_1` (the call id `runBuiltin` and friends use). */
export const ok = (output: string): Observation => ({ callId: 'call_1', ok: true, output });

/** The observation of call `call_1` failing with a `ToolError`'s message. */
export const toolError = (message: string): Observation => ({
  callId: 'call_1',
  ok: false,
  error: 'tool_error',
  message,
});
