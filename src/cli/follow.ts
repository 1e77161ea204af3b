import { WorkflowFailedError } from '@temporalio/client';
import type { KeelClient } from '../client.js';
import type { RunResult } from '../contract/run-result.js';
import type { RunState } from '../contract/run-state.js';
import { formatEvent, formatResult } from './format.js';

/** How following a run ended. */
export type FollowOutcome =
  | { kind: 'ended'; result: RunResult }
  | { kind: 'cancelled' }
  | { kind: 'failed'; message: string }
  | { kind: 'detached' }
  /** With `untilAnswered`: the run answered (a session now waits for the next message). */
  | { kind: 'answered'; answer: string };

/**
 * Follows a run until it ends (or per `options`) while Ctrl-C stops the following, not the run; for
 * commands that watch a run they did not start.
 */
export async function followUntilInterrupted(
  keel: KeelClient,
  runId: string,
  options: Omit<FollowOptions, 'signal'>,
): Promise<FollowOutcome> {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  try {
    return await followRun(keel, runId, { ...options, signal: controller.signal });
  } finally {
    process.removeListener('SIGINT', stop);
  }
}

/** Options for {@link followRun}. */
export interface FollowOptions {
  /** Print progress lines (off for `--json`). */
  progress: boolean;
  write: (line: string) => void;
  /** Aborting it stops following (detach); the run goes on. */
  signal: AbortSignal;
  intervalMs?: number;
  /** Print only events after this one (default: all). */
  afterSeq?: number;
  /** Stop once the run has given this many answers (a session answers each message). */
  untilAnswered?: number;
}

/**
 * Follows a run until it ends: prints each new turn and observation as it happens (from the `state`
 * query's numbered events), then returns how the run ended.
 */
export async function followRun(
  keel: KeelClient,
  runId: string,
  options: FollowOptions,
): Promise<FollowOutcome> {
  const handle = keel.temporal.workflow.getHandle(runId);
  let printed = options.afterSeq ?? -1;
  let waitingSaid = false;
  const printNew = (state: RunState): void => {
    for (const event of state.events.filter((candidate) => candidate.seq > printed)) {
      if (options.progress) for (const line of formatEvent(event)) options.write(line);
      printed = event.seq;
    }
  };
  for (;;) {
    if (options.signal.aborted) return { kind: 'detached' };
    const { status } = await handle.describe();
    try {
      const state = await keel.getRunState(runId);
      printNew(state);
      waitingSaid = false;
      if (
        options.untilAnswered !== undefined &&
        state.answers >= options.untilAnswered &&
        state.result === null
      ) {
        const answer = state.lastAnswer ?? '';
        if (options.progress) {
          options.write('');
          options.write(answer);
          if (state.phase === 'idle') options.write(`… session idle: \`keel send ${runId} "…"\` to go on`);
        }
        return { kind: 'answered', answer };
      }
    } catch {
      // No worker answers queries right now; the run waits for one too.
      if (options.progress && status.name === 'RUNNING' && !waitingSaid)
        options.write('… waiting for a worker');
      waitingSaid = true;
    }
    if (status.name !== 'RUNNING') break;
    await pause(options.intervalMs ?? 400, options.signal);
  }
  try {
    const result = await keel.waitForResult(runId);
    if (options.progress) for (const line of formatResult(result)) options.write(line);
    return { kind: 'ended', result };
  } catch (error) {
    const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
    if (cause?.name === 'CancelledFailure') {
      if (options.progress) options.write('■ cancelled');
      return { kind: 'cancelled' };
    }
    const message = cause?.message ?? (error as Error).message;
    if (options.progress) options.write(`✘ ${message}`);
    return { kind: 'failed', message };
  }
}

function pause(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      resolve();
    };
    const timer = setTimeout(stop, milliseconds);
    signal.addEventListener('abort', stop, { once: true });
  });
}
