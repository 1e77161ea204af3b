import { z } from 'zod';

/** What a run asks `keel.checkGuardrails` about: its agent's checks of one stage, on a text or a call. */
export const GuardrailRequest = z.discriminatedUnion('stage', [
  z.object({ agent: z.string(), stage: z.enum(['input', 'output']), text: z.string() }),
  z.object({
    agent: z.string(),
    stage: z.literal('toolCall'),
    call: z.object({ name: z.string(), argumentsJson: z.string() }),
  }),
]);
export type GuardrailRequest = z.infer<typeof GuardrailRequest>;

/**
 * What the checks decided: `pass` (with the text as the checks rewrote it, when one did), or `trip`
 * with the guardrail's name and its reason (for a tool call: the call is denied).
 */
export const GuardrailVerdict = z.discriminatedUnion('verdict', [
  z.object({ verdict: z.literal('pass'), text: z.string().optional() }),
  z.object({ verdict: z.literal('trip'), guardrail: z.string(), reason: z.string() }),
]);
export type GuardrailVerdict = z.infer<typeof GuardrailVerdict>;

/** The names of an agent's guardrails, by stage, as a run learns them. */
export const GuardrailNames = z.object({
  input: z.array(z.string()).optional(),
  output: z.array(z.string()).optional(),
  toolCalls: z.array(z.string()).optional(),
});
export type GuardrailNames = z.infer<typeof GuardrailNames>;
