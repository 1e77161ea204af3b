import { readFile } from 'node:fs/promises';
import { UnmatchedCallPolicy } from '../contract/replay.js';
import { ConversationMode } from '../contract/run-input.js';
import type { Expectations } from '../eval/assertions.js';
import type { CandidateSettings } from '../eval/candidate-input.js';
import type { CaseSource } from '../eval/collect-cases.js';
import type { AnswerMatch } from '../eval/answer-match.js';
import { loadEvalFile } from '../eval/eval-file.js';
import { loadJudge } from '../eval/judge.js';
import type { EvalFile } from '../eval/eval-file.js';
import type { EvalPlan } from './eval-command.js';
import { UsageError } from './io.js';

/** `keel eval`'s own options, as parsed. */
export interface EvalOptions {
  file: string | undefined;
  runs: string[];
  histories: string[];
  query: string | undefined;
  limit: number | undefined;
  instructions: string | undefined;
  instructionsFile: string | undefined;
  model: string | undefined;
  agent: string | undefined;
  tools: string[] | undefined;
  conversation: string | undefined;
  unmatched: string | undefined;
  allowTools: string[] | undefined;
  match: string | undefined;
  judge: string | undefined;
  concurrency: number | undefined;
  evalId: string | undefined;
  html: string | undefined;
  taskQueue: string;
}

/** Cases a `--query` brings in unless `--limit` says otherwise. */
const DEFAULT_QUERY_LIMIT = 20;

/**
 * The plan of `keel eval` from its eval file (if any) and options; an option overrides the file's
 * setting, and `--run`, `--history` and `--query` add cases to the file's.
 */
export async function evalPlan(options: EvalOptions): Promise<EvalPlan> {
  const file: EvalFile | undefined =
    options.file === undefined ? undefined : await loadEvalFile(options.file);
  // The file's cases come with the file-level assertions merged in already.
  const sources: CaseSource<Expectations>[] = (file?.cases ?? []).map(({ id, source, expect }) => ({
    ...source,
    id,
    ...(expect !== undefined ? { expect } : {}),
  }));
  for (const runId of options.runs) sources.push({ kind: 'run', runId });
  for (const history of options.histories) sources.push({ kind: 'history', path: history });
  if (options.query !== undefined)
    sources.push({ kind: 'query', query: options.query, limit: options.limit ?? DEFAULT_QUERY_LIMIT });
  else if (options.limit !== undefined) {
    // Without --query, --limit is for the eval file's query cases, in place of their own limits.
    const queries = sources.filter((source) => source.kind === 'query');
    if (queries.length === 0)
      throw new UsageError('--limit goes with --query, or with an eval file that has query cases');
    for (const source of queries) source.limit = options.limit;
  }
  if (sources.length === 0)
    throw new UsageError(
      'Give the runs to evaluate: an eval file, --run <id>, --history <file> or --query "<visibility query>".',
    );
  if (options.instructions !== undefined && options.instructionsFile !== undefined)
    throw new UsageError('Give --instructions or --instructions-file, not both.');
  const instructions =
    options.instructionsFile !== undefined
      ? await readFile(options.instructionsFile, 'utf8').catch((error: unknown) => {
          throw new UsageError(
            `--instructions-file: cannot read ${options.instructionsFile}: ${(error as Error).message}`,
          );
        })
      : options.instructions;
  // The file's instructionsFile is read into instructions already.
  const fromFile = file?.candidate;
  const candidate: CandidateSettings = {
    ...(fromFile?.instructions !== undefined ? { instructions: fromFile.instructions } : {}),
    ...(fromFile?.model !== undefined ? { model: fromFile.model } : {}),
    ...(fromFile?.agent !== undefined ? { agent: fromFile.agent } : {}),
    ...(fromFile?.tools !== undefined ? { tools: fromFile.tools } : {}),
    ...(fromFile?.conversation !== undefined ? { conversation: fromFile.conversation } : {}),
  };
  if (instructions !== undefined) candidate.instructions = instructions;
  if (options.model !== undefined) candidate.model = options.model;
  if (options.agent !== undefined) candidate.agent = options.agent;
  if (options.tools !== undefined) candidate.tools = options.tools;
  if (options.conversation !== undefined) {
    const parsed = ConversationMode.safeParse(options.conversation);
    if (!parsed.success)
      throw new UsageError(
        `--conversation must be chained or stateless, not ${JSON.stringify(options.conversation)}`,
      );
    candidate.conversation = parsed.data;
  }
  let unmatched: UnmatchedCallPolicy = file?.unmatched ?? 'refuse';
  if (options.unmatched !== undefined) {
    const parsed = UnmatchedCallPolicy.safeParse(options.unmatched);
    if (!parsed.success)
      throw new UsageError(
        `--unmatched must be refuse, run or diverge, not ${JSON.stringify(options.unmatched)}`,
      );
    unmatched = parsed.data;
  }
  return {
    sources,
    candidate,
    unmatched,
    allowTools: options.allowTools ?? file?.allowTools ?? [],
    match: await answerMatch(options, file),
    concurrency: options.concurrency ?? file?.concurrency,
    evalId: options.evalId,
    html: options.html,
    taskQueue: options.taskQueue,
  };
}

/** How answers are compared: `--judge` (a module) or `--match`, else the file's, else exactly. */
async function answerMatch(options: EvalOptions, file: EvalFile | undefined): Promise<AnswerMatch> {
  if (options.judge !== undefined && options.match !== undefined)
    throw new UsageError('Give --match or --judge, not both: a judge decides whether answers match.');
  if (options.judge !== undefined) return await loadJudge(options.judge);
  if (options.match !== undefined) {
    if (options.match !== 'exact' && options.match !== 'normalised')
      throw new UsageError(`--match must be exact or normalised, not ${JSON.stringify(options.match)}`);
    return options.match;
  }
  if (file?.judge !== undefined) return await loadJudge(file.judge);
  return file?.match === 'normalised' ? 'normalised' : 'exact';
}
