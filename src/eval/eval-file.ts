import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../config-error.js';
import { TOOL_NAME_PATTERN } from '../contract/defaults.js';
import { DEFAULT_EVAL_CONCURRENCY } from '../contract/eval-input.js';
import { formatPath } from '../contract/format-issues.js';
import { UnmatchedCallPolicy } from '../contract/replay.js';
import { ConversationMode } from '../contract/run-input.js';
import { Expectations, mergeExpectations } from './assertions.js';

const ToolName = z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name');
const SOURCES = ['run', 'history', 'query', 'task'] as const;

/** What the candidate changes: other instructions (inline or from a file), model, agent, tools or conversation. */
export const EvalCandidate = z
  .strictObject({
    instructions: z.string().max(200_000).optional(),
    /** A file whose text becomes `instructions`, relative to the eval file's folder. */
    instructionsFile: z.string().min(1).optional(),
    model: z.string().trim().min(1).max(200).optional(),
    agent: z.string().regex(TOOL_NAME_PATTERN, 'is not a valid agent name').optional(),
    tools: z.array(ToolName).max(128).optional(),
    /** How the candidate run keeps its conversation; the worker's `KEEL_CONVERSATION` when absent. */
    conversation: ConversationMode.optional(),
  })
  .refine((candidate) => candidate.instructions === undefined || candidate.instructionsFile === undefined, {
    message: 'set instructions or instructionsFile, not both',
    path: ['instructionsFile'],
  });
export type EvalCandidate = z.infer<typeof EvalCandidate>;

/** Where a case's recorded run comes from, or the inline task it runs instead. */
export type EvalCaseSource =
  | { kind: 'run'; runId: string }
  | { kind: 'history'; path: string }
  | { kind: 'query'; query: string; limit: number }
  | { kind: 'task'; task: string };

/** One case as written: an id and exactly one of `run`, `history`, `query` (with `limit`) or `task`. */
export const EvalFileCase = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1–100 letters, digits, dots, dashes or underscores'),
    /** A recorded run's workflow id. */
    run: z.string().min(1).max(1000).optional(),
    /** An exported history file (`keel export`), relative to the eval file's folder. */
    history: z.string().min(1).optional(),
    /** A visibility query; each run it finds (at most `limit`, default 20) is a case. */
    query: z.string().min(1).max(10_000).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    /** A task to run fresh: there is no recorded run, so no answer or call diff to compare with. */
    task: z.string().trim().min(1).max(200_000).optional(),
    expect: Expectations.optional(),
  })
  .superRefine((entry, context) => {
    const given = SOURCES.filter((key) => entry[key] !== undefined);
    if (given.length !== 1)
      context.addIssue({
        code: 'custom',
        message:
          given.length === 0
            ? 'needs one of run, history, query or task'
            : `has ${given.join(' and ')}: give exactly one of run, history, query or task`,
      });
    if (entry.limit !== undefined && entry.query === undefined)
      context.addIssue({ code: 'custom', path: ['limit'], message: 'applies only to a query case' });
    if (entry.task !== undefined && entry.expect?.sameAnswer !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['expect', 'sameAnswer'],
        message: 'an inline task has no recorded answer to compare with',
      });
  })
  .transform((entry) => ({ id: entry.id, source: sourceOf(entry), expect: entry.expect ?? {} }));

function sourceOf(entry: {
  run?: string;
  history?: string;
  query?: string;
  limit?: number;
  task?: string;
}): EvalCaseSource {
  if (entry.run !== undefined) return { kind: 'run', runId: entry.run };
  if (entry.history !== undefined) return { kind: 'history', path: entry.history };
  if (entry.query !== undefined) return { kind: 'query', query: entry.query, limit: entry.limit ?? 20 };
  return { kind: 'task', task: entry.task ?? '' };
}

/**
 * An eval file (JSON): the candidate, what replay does with unmatched calls, how answers are
 * matched (`exact` unless a `judge` module is given, which means `judge`), the cases, and what
 * every case expects (`expect`, to which a case's own `expect` adds). Unknown keys are errors.
 */
export const EvalFileSchema = z
  .strictObject({
    /** The file's JSON Schema (docs/schemas/eval-file.schema.json), for editors; Keel ignores it. */
    $schema: z.string().max(2_000).optional(),
    candidate: EvalCandidate.default({}),
    unmatched: UnmatchedCallPolicy.default('refuse'),
    allowTools: z.array(ToolName).max(128).default([]),
    match: z.enum(['exact', 'normalised', 'judge']).optional(),
    /** A module whose default export judges answers, relative to the eval file's folder. */
    judge: z.string().min(1).optional(),
    concurrency: z.number().int().min(1).max(64).default(DEFAULT_EVAL_CONCURRENCY),
    expect: Expectations.optional(),
    cases: z.array(EvalFileCase).min(1).max(10_000),
  })
  .superRefine((file, context) => {
    if (file.match === 'judge' && file.judge === undefined)
      context.addIssue({ code: 'custom', path: ['judge'], message: 'match is judge: name the judge module' });
    if (file.judge !== undefined && file.match !== undefined && file.match !== 'judge')
      context.addIssue({
        code: 'custom',
        path: ['match'],
        message: `is ${file.match} but a judge is set: set match to judge, or drop judge`,
      });
    const seen = new Map<string, number>();
    file.cases.forEach((entry, index) => {
      const first = seen.get(entry.id);
      if (first !== undefined)
        context.addIssue({
          code: 'custom',
          path: ['cases', index, 'id'],
          message: `repeats the id ${entry.id} of cases[${first}]`,
        });
      else seen.set(entry.id, index);
    });
  })
  .transform((file) => ({ ...file, match: file.match ?? (file.judge === undefined ? 'exact' : 'judge') }));

/**
 * An eval file as {@link loadEvalFile} returns it: paths absolute, `candidate.instructions` read
 * from `instructionsFile`, and each case's `expect` the file's merged with its own.
 */
export type EvalFile = z.output<typeof EvalFileSchema>;
/** One case of a loaded eval file. */
export type EvalFileCase = z.output<typeof EvalFileCase>;

/** An eval file that cannot be used: one line per problem, each naming the file and the JSON path. */
export class EvalFileError extends ConfigError {
  override name = 'EvalFileError';
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(problems.map((problem) => `${file}: ${problem}`).join('\n'));
  }
}

/** Reads and checks the eval file at `file`, resolving its relative paths against the file's folder. */
export async function loadEvalFile(file: string): Promise<EvalFile> {
  const absolute = path.resolve(file);
  const folder = path.dirname(absolute);
  let source: string;
  try {
    source = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new EvalFileError(absolute, [
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    ]);
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    throw new EvalFileError(absolute, [`is not valid JSON: ${(error as Error).message}`]);
  }
  const parsed = EvalFileSchema.safeParse(json);
  if (!parsed.success) throw new EvalFileError(absolute, evalFileIssues(parsed.error));
  const loaded = parsed.data;
  const problems: string[] = [];
  const candidate = { ...loaded.candidate };
  if (candidate.instructionsFile !== undefined) {
    candidate.instructionsFile = path.resolve(folder, candidate.instructionsFile);
    try {
      candidate.instructions = await readFile(candidate.instructionsFile, 'utf8');
    } catch (error) {
      problems.push(
        `candidate.instructionsFile: cannot read ${candidate.instructionsFile} (${errorCode(error)})`,
      );
    }
  }
  const judge = loaded.judge === undefined ? undefined : path.resolve(folder, loaded.judge);
  if (judge !== undefined)
    await access(judge).catch((error: unknown) =>
      problems.push(`judge: cannot read ${judge} (${errorCode(error)})`),
    );
  const cases = await Promise.all(
    loaded.cases.map(async (entry, index) => {
      const expect = mergeExpectations(loaded.expect, entry.expect);
      if (entry.source.kind === 'task') delete expect.sameAnswer;
      if (entry.source.kind !== 'history') return { ...entry, expect };
      const history = path.resolve(folder, entry.source.path);
      await access(history).catch((error: unknown) =>
        problems.push(`cases[${index}].history: cannot read ${history} (${errorCode(error)})`),
      );
      return { ...entry, source: { kind: 'history' as const, path: history }, expect };
    }),
  );
  if (problems.length > 0) throw new EvalFileError(absolute, problems);
  return { ...loaded, candidate, cases, ...(judge === undefined ? {} : { judge }) };
}

/** The schema's issues as `path: message` lines, one line per unknown key (with the key in the path). */
export function evalFileIssues(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown key`)
      : [`${formatPath(issue.path)}: ${issue.message}`],
  );
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
