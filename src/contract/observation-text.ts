import type { Observation } from './observation.js';

/** The text the model receives as `function_call_output.output` for an observation. */
export function observationText(observation: Observation): string {
  if (observation.ok) return observation.output;
  const body: Record<string, string> = { error: observation.error, message: observation.message };
  if (observation.preview !== undefined) body.preview = observation.preview;
  return JSON.stringify(body);
}
