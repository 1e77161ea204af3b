import { WorkflowFailedError } from '@temporalio/client';
import type { KeelClient } from '../client.js';
import type { RunResult } from '../contract/run-result.js';
import type { PendingApproval, RunState } from '../contract/run-state.js';
import { retryLines } from './attempts.js';
import { formatEvent, formatResult } from './format.js';
import { showLiveText } from './live-text.js';
import {
  liveTerminal,
  pauseProgress,
  progressDisplay,
  promptOpen,
  promptsClosed,
  withdrawPrompts,
} from './status-line.js';
import type { ProgressDisplay } from './status-line.js';
import { printable } from './terminal-text.js';

/**
 * How long one look at the run's state may take. A query that reaches a worker which never answers
 * it (a frozen process, or a poll the worker had given up before the server handed it the query)
 * blocks for the server's 30 s: following would show nothing that long. It asks again instead.
 */
const STATE_QUERY_DEADLINE_MS = 5_000;

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
  /** When the status line's elapsed time counts from (default: the run's start). */
  since?: number;
  /** At the end, only the result's summary line: the conversation showed its text already (`keel chat`). */
  summaryOnly?: boolean;
  /** After a session's answer, say how to send the next message (default true; `keel chat` prompts instead). */
  sendHint?: boolean;
  /**
   * Asks a person about a call that waits for approval, once per call, with progress output paused
   * (`keel chat`); without it, waiting calls are only reported.
   */
  askApproval?: (pending: PendingApproval) => Promise<void>;
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
  let display: ProgressDisplay | undefined;
  let printed = options.afterSeq ?? -1;
  let waitingSaid = false;
  const asked = new Set<string>();
  // Attempts of model and tool calls Temporal tries again, said once each.
  const retried = new Set<string>();
  // The model's text as it is written, in a live terminal only: it replaces the status line while
  // the model writes. It may wait on the run's next event after following ends; it stops then.
  const live = new AbortController();
  let liveText: Promise<void> | undefined;
  try {
    for (;;) {
      if (options.signal.aborted) return { kind: 'detached' };
      const { status, startTime, raw } = await handle.describe();
      display ??= options.progress
        ? progressDisplay(options.write, options.since ?? startTime.getTime())
        : SILENT;
      if (liveText === undefined && options.progress && liveTerminal(process.stdout))
        liveText = showLiveText(keel, runId, display, live.signal).catch(() => undefined);
      let state: RunState | undefined;
      try {
        state = await keel.temporal.connection.withDeadline(Date.now() + STATE_QUERY_DEADLINE_MS, () =>
          keel.getRunState(runId),
        );
      } catch {
        // No worker answers queries right now; the run waits for one too.
        if (status.name === 'RUNNING' && !waitingSaid) display.line('… waiting for a worker');
        waitingSaid = true;
      }
      if (status.name === 'RUNNING') {
        for (const line of retryLines(raw.pendingActivities ?? [], retried)) display.line(line);
        display.status(state);
      }
      if (state !== undefined) {
        waitingSaid = false;
        for (const event of state.events.filter((candidate) => candidate.seq > printed)) {
          for (const line of formatEvent(event)) display.line(line);
          printed = event.seq;
        }
        if (
          options.untilAnswered !== undefined &&
          state.answers >= options.untilAnswered &&
          state.result === null
        ) {
          // The answer ends this following: no prompt stays open above it.
          withdrawPrompts();
          display.close();
          const answer = state.lastAnswer ?? '';
          display.text('');
          display.text(printable(answer));
          if (state.phase === 'idle' && options.sendHint !== false)
            display.text(`… session idle: \`keel send ${runId} "…"\` to go on`);
          return { kind: 'answered', answer };
        }
        if (options.askApproval && status.name === 'RUNNING' && promptOpen()) {
          // "Cancel or detach?" is open: two prompts would read the same keys. Its answer comes
          // first; then the run is looked at afresh (it may be detached from, or cancelled).
          await promptsClosed();
          continue;
        }
        if (options.askApproval && status.name === 'RUNNING') {
          for (const pending of state.pendingApprovals.filter((call) => !asked.has(call.callId))) {
            asked.add(pending.callId);
            const resume = pauseProgress();
            try {
              await options.askApproval(pending);
            } finally {
              resume();
            }
            if (options.signal.aborted) return { kind: 'detached' };
          }
        }
      }
      if (status.name !== 'RUNNING') break;
      await pause(options.intervalMs ?? 400, options.signal);
    }
    // The run has ended: a prompt still asking what to do with it has nothing left to decide.
    withdrawPrompts();
    display.close();
    try {
      const result = await keel.waitForResult(runId);
      const lines = formatResult(result);
      for (const line of options.summaryOnly ? lines.slice(0, 1) : lines) display.text(line);
      return { kind: 'ended', result };
    } catch (error) {
      const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
      if (cause?.name === 'CancelledFailure') {
        display.text('■ cancelled');
        return { kind: 'cancelled' };
      }
      const message = cause?.message ?? (error as Error).message;
      display.text(`✘ ${printable(message, { singleLine: true })}`);
      return { kind: 'failed', message };
    }
  } finally {
    live.abort();
    display?.close();
  }
}

/** The display of `--json` following: nothing. */
const SILENT: ProgressDisplay = {
  line: () => undefined,
  text: () => undefined,
  status: () => undefined,
  typing: () => undefined,
  close: () => undefined,
};

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
