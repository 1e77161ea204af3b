import { z } from 'zod';

import { FAILURE_TYPES } from './failure-type-names.js';

export {
  KEEL_FAILURE_TYPES,
  MODEL_FAILURE_TYPES,
  STOPPED_FAILURE_TYPES,
  toFailureType,
  UNKNOWN_FAILURE_TYPE,
} from './failure-type-names.js';
export type { ModelFailureType } from './failure-type-names.js';

/**
 * Every failure type Keel produces, closed so a caller can switch on it exhaustively: `errorType` of a
 * `failed` result, and the type of the application failure that fails a run (a result that is not
 * `completed`, see `runEndingFailure`; `KeelError.InvalidInput`, `KeelError.Unexpected`) or refuses an
 * update (`KeelError.InvalidUpdate`). An activity failure of any
 * other type becomes `KeelError.UnknownFailure`, with its own type in the result's `reason`.
 */
export const FailureType = z
  .enum(FAILURE_TYPES)
  .describe('Dotted failure type: ModelError.* from the model server, KeelError.* from Keel itself.');
export type FailureType = z.infer<typeof FailureType>;
