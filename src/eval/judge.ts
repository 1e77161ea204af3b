import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigError } from '../config-error.js';

/** What a judge is asked: the case, its task, and the two final answers to compare. */
export interface JudgeInput {
  caseId: string;
  task: string;
  recorded: string;
  candidate: string;
}

/** What a judge may answer: whether the answers are the same, with an optional note why. */
export const JudgeVerdict = z.union([
  z.boolean(),
  z.object({ same: z.boolean(), note: z.string().max(10_000).optional() }),
]);
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

/** A user-supplied function that decides whether two final answers are the same (an eval file's `judge`). */
export type Judge = (input: JudgeInput) => JudgeVerdict | Promise<JudgeVerdict>;

/** Imports the judge module at `modulePath` and returns its default export, which must be a function. */
export async function loadJudge(modulePath: string): Promise<Judge> {
  const absolute = path.resolve(modulePath);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  } catch (error) {
    throw new ConfigError(`Could not load the judge module ${absolute}: ${firstLine(error)}`);
  }
  if (typeof module.default !== 'function')
    throw new ConfigError(
      `The judge module ${absolute} must export a function as its default export ` +
        `(export default ({ caseId, task, recorded, candidate }) => boolean | { same, note }); its default export is ${describe(module.default)}.`,
    );
  return module.default as Judge;
}

/** The first line of an error's message: what a person needs, without the stack. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
