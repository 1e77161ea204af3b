import { WorkflowNotFoundError } from '@temporalio/common';
import type { KeelClient } from '../client.js';
import { keelModel, keelStatus, keelTokens, keelTurns } from '../workflows/search-attributes.js';
import { followUntilInterrupted } from './follow.js';
import { formatResult, formatState } from './format.js';
import { endingData, endingOf, formatEnding, hasEnded } from './ended-run.js';
import { connectClient, EXIT, existingTarget, workersPolling } from './io.js';
import type { Output } from './io.js';

/** How long `keel status` waits for a worker to answer the state query of a running run. */
const QUERY_DEADLINE_MS = 5_000;

/** Runs `work` with a client on the existing cluster, closing it afterwards. */
export async function withClient(
  out: Output,
  taskQueue: string,
  work: (keel: KeelClient) => Promise<number>,
): Promise<number> {
  const client = await connectClient(await existingTarget(out), taskQueue);
  try {
    return await work(client.keel);
  } finally {
    await client.close();
  }
}

/**
 * `keel status <id>`: a run that has ended, how it ended (read from Temporal, no worker needed); a
 * running one, its live state (a query a worker answers), or that no worker polls its task queue.
 */
export function statusCommand(out: Output, taskQueue: string, runId: string): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const description = await keel.temporal.workflow.getHandle(runId).describe();
    const status = description.status.name;
    if (hasEnded(description)) {
      const ending = await endingOf(keel, runId);
      if (out.json) out.data({ runId, status, state: null, ...endingData(ending) });
      else for (const line of formatEnding(runId, description, ending)) out.line(line);
      return EXIT.ok;
    }
    // A query waits for a worker to answer it: without one polling the run's queue, say so at once.
    if (!(await workersPolling(keel, description.taskQueue))) {
      if (out.json) out.data({ runId, status, state: null, workersPolling: false });
      else
        out.line(
          `run ${runId}: running, waiting for a worker: none polls its task queue "${description.taskQueue}" (start one with \`keel worker --task-queue ${description.taskQueue}\`)`,
        );
      return EXIT.ok;
    }
    // The server lists a worker that stopped a while ago as polling still: a query then waits for
    // nobody, so it gets a deadline, and a run without an answering worker is said to be one.
    const deadline = Date.now() + QUERY_DEADLINE_MS;
    const state = await keel.temporal.connection
      .withDeadline(deadline, () => keel.getRunState(runId))
      .catch((error: unknown) => {
        // Past the deadline the call ends as DEADLINE_EXCEEDED or CANCELLED: either way, nobody answered.
        if (Date.now() >= deadline) return undefined;
        throw error;
      });
    if (state === undefined) {
      if (out.json) out.data({ runId, status, state: null, workersPolling: true });
      else
        out.line(
          `run ${runId}: running, but no worker answered within ${QUERY_DEADLINE_MS / 1000} s: the one polling task queue "${description.taskQueue}" is busy or has stopped`,
        );
      return EXIT.ok;
    }
    if (out.json) out.data({ runId, status, state });
    else for (const line of formatState(runId, state)) out.line(line);
    return EXIT.ok;
  });
}

/**
 * `keel follow <id>`: prints progress until the run ends (Ctrl-C stops following, not the run); of a
 * run that has ended, how it ended, at once.
 */
export function followCommand(out: Output, taskQueue: string, runId: string): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const description = await keel.temporal.workflow.getHandle(runId).describe();
    if (hasEnded(description)) {
      const ending = await endingOf(keel, runId);
      if (out.json) out.data({ runId, status: description.status.name, ...endingData(ending) });
      else {
        const [headline = '', ...how] = formatEnding(runId, description, ending);
        out.line(headline);
        for (const line of ending.kind === 'result' ? formatResult(ending.result) : how) out.line(line);
      }
      return ending.kind === 'result' && ending.result.status === 'completed' ? EXIT.ok : EXIT.notCompleted;
    }
    const outcome = await followUntilInterrupted(keel, runId, { progress: !out.json, write: out.line });
    if (out.json) out.data({ runId, ...outcome });
    if (outcome.kind === 'detached')
      out.note(`Stopped following; the run goes on. \`keel follow ${runId}\` to watch again.`);
    return outcome.kind === 'ended' && outcome.result.status === 'completed'
      ? EXIT.ok
      : outcome.kind === 'detached'
        ? EXIT.ok
        : EXIT.notCompleted;
  });
}

/** `keel result <id>`: waits for the run to end and prints its result. */
export function resultCommand(out: Output, taskQueue: string, runId: string): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    try {
      const result = await keel.waitForResult(runId);
      if (out.json) out.data(result);
      else for (const line of formatResult(result)) out.line(line);
      return result.status === 'completed' ? EXIT.ok : EXIT.notCompleted;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw error;
      const message = (error as { cause?: Error }).cause?.message ?? (error as Error).message;
      out.error('no-result', `✘ run ${runId} did not end with a result: ${message}`, { runId });
      return EXIT.notCompleted;
    }
  });
}

/**
 * `keel cancel <id>`: asks the run to stop; its running model call or tool is aborted. A run that has
 * ended already is not asked: that is said, with exit code 1, instead of a cancel that does nothing.
 */
export function cancelCommand(out: Output, taskQueue: string, runId: string): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const { status } = await keel.temporal.workflow.getHandle(runId).describe();
    if (status.name !== 'RUNNING') {
      const message = `Run ${runId} has already ended (${status.name}): there is nothing to cancel. \`keel result ${runId}\` shows how it ended.`;
      out.error('run-ended', message, { runId, status: status.name });
      return EXIT.error;
    }
    await keel.cancelRun(runId);
    if (out.json) out.data({ runId, cancelRequested: true });
    else out.line(`Cancel requested for ${runId}; \`keel follow ${runId}\` shows it end.`);
    return EXIT.ok;
  });
}

/** One line of `keel list`. */
interface ListedRun {
  runId: string;
  status: string;
  keelStatus: string | null;
  model: string | null;
  turns: number | null;
  tokens: number | null;
  startTime: string;
}

/** `keel list`: recent runs, newest first, from Temporal's visibility store. */
export function listCommand(
  out: Output,
  taskQueue: string,
  limit: number,
  filter: string | undefined,
): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const query = [
      `WorkflowType = "agentRun" AND ExecutionStatus != "ContinuedAsNew"`,
      ...(filter ? [`(${filter})`] : []),
    ].join(' AND ');
    const runs: ListedRun[] = [];
    for await (const execution of keel.temporal.workflow.list({ query })) {
      const attributes = execution.typedSearchAttributes;
      runs.push({
        runId: execution.workflowId,
        status: execution.status.name,
        keelStatus: attributes.get(keelStatus) ?? null,
        model: attributes.get(keelModel) ?? null,
        turns: attributes.get(keelTurns) ?? null,
        tokens: attributes.get(keelTokens) ?? null,
        startTime: execution.startTime.toISOString(),
      });
      if (runs.length >= limit) break;
    }
    if (out.json) out.data(runs);
    else if (runs.length === 0) out.line('No runs.');
    for (const run of out.json ? [] : runs) {
      out.line(
        `${run.runId}  ${run.keelStatus ?? run.status}  turns ${run.turns ?? '-'}  tokens ${run.tokens ?? '-'}  ${run.startTime}`,
      );
    }
    return EXIT.ok;
  });
}
