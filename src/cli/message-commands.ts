import { RunUpdateRefusedError } from '../client.js';
import type { KeelClient } from '../client.js';
import { followUntilInterrupted } from './follow.js';
import { CliFailure, EXIT, UsageError } from './io.js';
import type { Output } from './io.js';
import { withClient } from './inspect-commands.js';
import { plural } from './terminal-text.js';

/** Runs an update command; a run's refusal is a clear one-line error with exit code 1. */
function updateCommand(
  out: Output,
  taskQueue: string,
  runId: string,
  work: (keel: KeelClient) => Promise<number>,
): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    try {
      return await work(keel);
    } catch (error) {
      if (!(error instanceof RunUpdateRefusedError)) throw error;
      out.error('refused', `Refused: ${error.message}`, { runId });
      return EXIT.error;
    }
  });
}

/** `keel approve <id> <callId> [--args <json>] [--note <text>]`: lets a waiting call run. */
export function approveCommand(
  out: Output,
  taskQueue: string,
  runId: string,
  callId: string,
  options: { argumentsJson?: string; note?: string },
): Promise<number> {
  const edited = options.argumentsJson === undefined ? undefined : jsonObject(options.argumentsJson);
  return updateCommand(out, taskQueue, runId, async (keel) => {
    const decision = await keel.approveCall(runId, callId, {
      ...(edited !== undefined ? { arguments: edited } : {}),
      ...(options.note !== undefined ? { note: options.note } : {}),
    });
    if (out.json) out.data({ runId, ...decision });
    else
      out.line(
        `Approved ${callId}${edited !== undefined ? ' with edited arguments' : ''}; the call runs now.`,
      );
    return EXIT.ok;
  });
}

/** `keel reject <id> <callId> [--reason <text>]`: refuses a waiting call; the model sees the reason. */
export function rejectCommand(
  out: Output,
  taskQueue: string,
  runId: string,
  callId: string,
  reason: string | undefined,
): Promise<number> {
  return updateCommand(out, taskQueue, runId, async (keel) => {
    const decision = await keel.rejectCall(runId, callId, reason);
    if (out.json) out.data({ runId, ...decision });
    else out.line(`Rejected ${callId}; the model is told${reason !== undefined ? ' why' : ''}.`);
    return EXIT.ok;
  });
}

/** `keel send <id> "<message>" [--wait]`: gives the run a message; `--wait` follows until it is answered. */
export function sendCommand(
  out: Output,
  taskQueue: string,
  runId: string,
  text: string,
  wait: boolean,
): Promise<number> {
  if (text.trim() === '')
    throw new UsageError('Give the message, e.g. keel send <run id> "And now the tests?"');
  return updateCommand(out, taskQueue, runId, async (keel) => {
    // A run that has ended takes no message, and its state would take a worker to replay: say so.
    const { status } = await keel.temporal.workflow.getHandle(runId).describe();
    if (status.name !== 'RUNNING')
      throw new CliFailure(
        'run-ended',
        `Run ${runId} has ended (${status.name}): it takes no more messages. \`keel result ${runId}\` shows how it ended.`,
        EXIT.error,
        { runId, status: status.name },
      );
    const before = wait ? await keel.getRunState(runId) : undefined;
    const receipt = await keel.sendMessage(runId, text);
    if (before === undefined) {
      if (out.json) out.data({ runId, ...receipt });
      else
        out.line(
          `Sent; ${plural(receipt.queued, 'message')} ${receipt.queued === 1 ? 'waits' : 'wait'} for the run's next turn.`,
        );
      return EXIT.ok;
    }
    const outcome = await followUntilInterrupted(keel, runId, {
      progress: !out.json,
      write: out.line,
      afterSeq: before.events.at(-1)?.seq ?? -1,
      untilAnswered: before.answers + 1,
    });
    if (out.json) out.data({ runId, ...outcome });
    return outcome.kind === 'answered' || outcome.kind === 'detached' ? EXIT.ok : EXIT.notCompleted;
  });
}

/** `keel end <id>`: ends a session (at once when idle, else after its current answer). */
export function endCommand(out: Output, taskQueue: string, runId: string): Promise<number> {
  return updateCommand(out, taskQueue, runId, async (keel) => {
    await keel.endSession(runId);
    if (out.json) out.data({ runId, ending: true });
    else out.line(`Session ${runId} ends after its current answer; \`keel result ${runId}\` shows it.`);
    return EXIT.ok;
  });
}

function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args must be a JSON object: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError('--args must be a JSON object, e.g. {"path":"notes.txt"}');
  }
  return value as Record<string, unknown>;
}
