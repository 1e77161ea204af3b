import type { RunResult } from '../contract/run-result.js';
import type { NextInput } from './schemas.js';

/** A run's ending before the totals are added: the result union without its common fields. */
export type Ending = RunResult extends infer Variant
  ? Variant extends RunResult
    ? Omit<Variant, 'turns' | 'toolCalls' | 'usage' | 'lastResponseId' | 'model' | 'costUsd'>
    : never
  : never;

/**
 * What the run does next, as plain data: a model turn with its input (`task`, `observations`,
 * `messages`), waiting for a message (`idle`, sessions only), or ending. The input steps are the
 * ones a run carries across continue-as-new (`NextInput`), so the union stays closed and serialisable.
 */
export type Step = NextInput | { kind: 'finish'; ending: Ending };

/** The step that ends the run with `ending`. */
export function finishStep(ending: Ending): Step {
  return { kind: 'finish', ending };
}
