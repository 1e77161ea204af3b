import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { KeelClient } from '../client.js';
import { EvalRunInput } from '../contract/eval-input.js';
import type { EvalCaseEnding, EvalRunResult } from '../contract/eval-input.js';
import { emptyUsage } from '../contract/usage.js';
import type { UnmatchedCallPolicy } from '../contract/replay.js';
import { candidateInput } from '../eval/candidate-input.js';
import type { CandidateSettings } from '../eval/candidate-input.js';
import { collectCases, EvalSourceError } from '../eval/collect-cases.js';
import type { CaseSource, ResolvedCase } from '../eval/collect-cases.js';
import { compareCase } from '../eval/compare.js';
import type { AnswerMatch } from '../eval/answer-match.js';
import { summarise } from '../eval/report.js';
import type { Expectations } from '../eval/assertions.js';
import { formatReportTable } from '../eval/report-table.js';
import { reportHtml } from '../eval/report-html.js';
import type { EvalReport } from '../eval/report.js';
import { readRunHistoryFile, RunHistoryFileError } from '../eval/history-file.js';
import { readTranscript, TranscriptError } from '../eval/read-transcript.js';
import type { RunTranscript } from '../eval/recorded-run.js';
import { resolveTarget } from './embedded.js';
import { printable } from './terminal-text.js';
import { CliFailure, connectClient, dataDirectory, EXIT, workersPolling } from './io.js';
import type { Output } from './io.js';
import { hostWorkerFor, requireWorkerConfig, runHosting } from './run-command.js';

/** What `keel eval` was asked to do, from its eval file and options. */
export interface EvalPlan {
  sources: CaseSource<Expectations>[];
  candidate: CandidateSettings;
  unmatched: UnmatchedCallPolicy;
  allowTools: string[];
  match: AnswerMatch;
  concurrency: number | undefined;
  evalId: string | undefined;
  /** Where to write the HTML report. */
  html: string | undefined;
  taskQueue: string;
}

/** How often the command asks the eval how far it is, to say which cases have ended. */
const PROGRESS_EVERY_MS = 1_000;

/**
 * `keel eval`: re-runs recorded runs' tasks against a candidate, each as a child run of one `evalRun`
 * workflow, the tools answered from the recordings; then compares both sides of every case and
 * reports. Exit code 0 when every case passes, 4 when some case does not. An eval that is already
 * there under `--id` is followed, not started again: a command that died half-way picks it up.
 */
export async function evalCommand(out: Output, plan: EvalPlan): Promise<number> {
  const remote = loadClientConnectConfig().connectionOptions.address !== undefined;
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: !remote });
  const client = await connectClient(target, plan.taskQueue);
  let hosted: { worker: Worker; connection: NativeConnection } | undefined;
  try {
    const keel = client.keel;
    const stored = plan.evalId === undefined ? undefined : await storedEval(keel, plan.evalId);
    // Following an eval: its cases are the ones it was started with, not what a query finds now.
    const sources =
      stored === undefined ? plan.sources : plan.sources.filter((source) => source.kind !== 'query');
    const given =
      sources.length === 0
        ? []
        : await collectCases(
            keel.temporal,
            sources,
            { readRun: readTranscript, readHistory: readRunHistoryFile },
            (runId, why) => out.note(printable(`Skipped run ${runId}: it ${why}.`)),
          ).catch((error: unknown) => {
            if (
              error instanceof EvalSourceError ||
              error instanceof TranscriptError ||
              error instanceof RunHistoryFileError
            )
              throw new CliFailure('eval-source', error.message);
            throw error;
          });
    const cases = stored === undefined ? given : await storedCases(keel, plan, stored, given);
    const polled = await workersPolling(keel);
    if (!remote && !polled)
      hosted = await hostWorkerFor(target, plan.taskQueue, requireWorkerConfig(), undefined);
    else if (!polled)
      out.note(
        `No worker polls task queue "${plan.taskQueue}": the eval's cases wait until one does. Start one with \`keel worker --task-queue ${plan.taskQueue}\` against the same server.`,
      );
    const session = async (): Promise<number> => {
      const evalId = await startOrAttach(out, keel, plan, cases, stored !== undefined);
      if (target.uiUrl)
        out.note(`Watch it: ${target.uiUrl}/namespaces/${target.namespace}/workflows/${evalId}`);
      let cancelled = false;
      const result = await waitWithProgress(out, keel, evalId).catch((error: unknown) => {
        if (!(error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure)) throw error;
        // The cases that ran are reported as they ended; the ones it never started, as never started.
        cancelled = true;
        out.note(`Eval ${evalId} was cancelled: cases it never started are reported as such.`);
        return cancelledEval(evalId, cases);
      });
      const report = await reportOf(keel, plan, cases, result);
      if (out.json) out.data({ evalId, ...(cancelled ? { cancelled } : {}), ...report });
      else
        for (const line of formatReportTable(report, { columns: process.stdout.columns }).split('\n'))
          out.line(line);
      if (plan.html !== undefined) {
        // After the report is out: a bad path loses nothing of it.
        await writeFile(plan.html, reportHtml(report)).catch((error: unknown) => {
          throw new CliFailure(
            'write-failed',
            `Cannot write the HTML report to ${plan.html}: ${(error as Error).message}`,
          );
        });
        out.note(`Report: ${path.resolve(plan.html)}`);
      }
      return cancelled || report.totals.failed > 0 ? EXIT.casesFailed : EXIT.ok;
    };
    return hosted ? await runHosting(hosted.worker, session) : await session();
  } finally {
    await client.close();
    await hosted?.connection.close();
  }
}

/** Starts the eval, or finds it under `--id` when it is there already (with the same cases). */
async function startOrAttach(
  out: Output,
  keel: KeelClient,
  plan: EvalPlan,
  cases: ResolvedCase<Expectations>[],
  stored: boolean,
): Promise<string> {
  if (plan.evalId !== undefined && stored) {
    out.note(`Eval ${plan.evalId} is there already; following it.`);
    return plan.evalId;
  }
  const inputs = cases.map((entry) => ({
    caseId: entry.caseId,
    input: candidateInput(entry.recorded ?? { task: entry.task }, plan.candidate, {
      unmatched: plan.unmatched,
      allowTools: plan.allowTools,
    }),
    // A run read from the cluster can be read again by whoever follows the eval; a file's cannot.
    ...(entry.recorded !== undefined && entry.fromCluster ? { recordedRunId: entry.recorded.runId } : {}),
  }));
  const evalId = await keel.startEval(
    { cases: inputs, ...(plan.concurrency !== undefined ? { concurrency: plan.concurrency } : {}) },
    plan.evalId !== undefined ? { evalId: plan.evalId } : {},
  );
  out.note(
    `Eval ${evalId} started: ${cases.length} case(s). Ctrl-C leaves it running; \`keel eval … --id ${evalId}\` picks it up again.`,
  );
  return evalId;
}

/** Waits for the eval's result, saying each case's ending as it comes. */
async function waitWithProgress(out: Output, keel: KeelClient, evalId: string): Promise<EvalRunResult> {
  const said = new Set<string>();
  const say = (ending: EvalCaseEnding): void => {
    if (said.has(ending.caseId)) return;
    said.add(ending.caseId);
    out.note(`  case ${ending.caseId}: ${ending.status}${ending.errorType ? ` (${ending.errorType})` : ''}`);
  };
  const result = keel.waitForEval(evalId);
  for (;;) {
    const tick = new Promise<'tick'>((resolve) => setTimeout(() => resolve('tick'), PROGRESS_EVERY_MS));
    const next = await Promise.race([result, tick]);
    if (next !== 'tick') {
      next.cases.forEach(say);
      return next;
    }
    const state = await keel.getEvalState(evalId).catch(() => undefined);
    state?.ended.forEach(say);
  }
}

/** Compares each case's candidate run with its recording. */
async function reportOf(
  keel: KeelClient,
  plan: EvalPlan,
  cases: ResolvedCase<Expectations>[],
  result: EvalRunResult,
): Promise<EvalReport> {
  const byCase = new Map(result.cases.map((ending) => [ending.caseId, ending]));
  const reports = [];
  for (const entry of cases) {
    const ending = byCase.get(entry.caseId);
    if (ending === undefined)
      throw new CliFailure(
        'eval-mismatch',
        `The eval has no case ${entry.caseId}: it was started with other cases. Give it another --id.`,
      );
    const candidate = await readTranscript(keel.temporal, ending.runId).catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return neverStarted(ending, entry.task);
      throw error;
    });
    const expect = entry.expect;
    reports.push(
      await compareCase(
        {
          caseId: entry.caseId,
          ...(entry.recorded !== undefined ? { recorded: entry.recorded } : {}),
          candidate,
          ...(expect !== undefined ? { expect } : {}),
        },
        { match: plan.match },
      ),
    );
  }
  return summarise(reports);
}

/**
 * The endings of a cancelled eval, which has no result: every case's run by its id, to be read
 * from its own history (one the eval never started is not there: see {@link neverStarted}).
 */
function cancelledEval(evalId: string, cases: readonly ResolvedCase<Expectations>[]): EvalRunResult {
  return {
    cases: cases.map((entry) => ({
      caseId: entry.caseId,
      runId: `${evalId}.${entry.caseId}`,
      status: 'cancelled' as const,
    })),
  };
}

/** The transcript of a candidate run that never started (the eval was cancelled before it). */
function neverStarted(ending: EvalCaseEnding, task: string): RunTranscript {
  return {
    runId: ending.runId,
    input: {},
    task,
    turns: [],
    outcome: { status: 'cancelled', text: '', reason: 'the candidate run never started' },
    usage: emptyUsage,
  };
}

/** The cases an eval was started with: its id, and the recorded run it replays when it names one. */
async function storedEval(
  keel: KeelClient,
  evalId: string,
): Promise<Array<{ caseId: string; recordedRunId?: string | undefined }> | undefined> {
  const handle = keel.temporal.workflow.getHandle(evalId);
  const description = await handle.describe().catch((error: unknown) => {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  });
  if (description === undefined) return undefined;
  if (description.type !== 'evalRun')
    throw new CliFailure('run-exists', `${evalId} is a ${description.type} workflow, not an eval.`);
  const history = await handle.fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const input = EvalRunInput.safeParse(
    await decodeFromPayloadsAtIndex<unknown>(keel.temporal.options.loadedDataConverter, 0, payloads),
  );
  if (!input.success)
    throw new CliFailure('eval-source', `Eval ${evalId} has an input this keel cannot read.`);
  return input.data.cases.map(({ caseId, recordedRunId }) => ({ caseId, recordedRunId }));
}

/**
 * The cases of an eval being followed, in its order: those the sources given now name (files,
 * runs, inline tasks) as given, the others (a query's) from the recorded run the eval names. A case
 * given now that the eval does not have is refused: the report would leave it out.
 */
async function storedCases(
  keel: KeelClient,
  plan: EvalPlan,
  stored: Array<{ caseId: string; recordedRunId?: string | undefined }>,
  given: ResolvedCase<Expectations>[],
): Promise<ResolvedCase<Expectations>[]> {
  const ids = new Set(stored.map((entry) => entry.caseId));
  const extra = given.find((entry) => !ids.has(entry.caseId));
  if (extra !== undefined)
    throw new CliFailure(
      'eval-mismatch',
      `Eval ${plan.evalId} has no case ${extra.caseId}: it was started with other cases. Give it another --id.`,
    );
  const cases: ResolvedCase<Expectations>[] = [];
  for (const entry of stored) {
    const known = given.find((candidate) => candidate.caseId === entry.caseId);
    if (known !== undefined) {
      cases.push(known);
      continue;
    }
    if (entry.recordedRunId === undefined)
      throw new CliFailure(
        'eval-mismatch',
        `Eval ${plan.evalId}'s case ${entry.caseId} came from a file or task not given now: give the same cases.`,
      );
    const recorded = await readTranscript(keel.temporal, entry.recordedRunId);
    const query = plan.sources.find(
      (source) =>
        source.kind === 'query' && (source.id === undefined || entry.caseId.startsWith(`${source.id}.`)),
    );
    cases.push({
      caseId: entry.caseId,
      recorded,
      task: recorded.task,
      expect: query?.expect,
      fromCluster: true,
    });
  }
  return cases;
}
