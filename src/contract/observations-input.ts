import { z } from 'zod';
import { Observation } from './observation.js';

/** A turn's input after the first: the observations of the previous turn's calls. */
export const ObservationsInput = z.object({
  kind: z.literal('observations'),
  /** The response whose function calls these observations answer. */
  previousResponseId: z.string(),
  observations: z.array(Observation),
  /** User messages that arrived during the turn, sent after the observations. Absent in older histories. */
  messages: z.array(z.string()).optional(),
});
export type ObservationsInput = z.infer<typeof ObservationsInput>;
