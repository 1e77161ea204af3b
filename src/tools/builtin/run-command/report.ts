import { constants } from 'node:os';
import type { Capture } from './capture.js';

/** How a command ended, as {@link report} renders it for the model. */
export interface Ending {
  status: { code: number | null; signal: NodeJS.Signals | null };
  stoppedBy: 'timeout' | 'cancelled' | 'limit' | undefined;
  seconds: number;
  signals: readonly NodeJS.Signals[];
  complete: boolean;
  stdout: Capture;
  stderr: Capture;
  /** Whether an exit code above 128 may stand for a signal (the sandbox reports deaths by signal so). */
  signalsAsCodes: boolean;
  /** Whether processes left running after a normal exit were found and stopped (and so are noted). */
  reportsLeftovers: boolean;
  /** Lines after the exit code: the limits the command ran into. */
  notes?: readonly string[];
}

/** The observation text: how it stopped, its exit, then stdout and stderr within `charLimit`. */
export function report(ending: Ending, charLimit: number): string {
  const lines: string[] = [];
  const killed = `killed (${ending.signals.join(', then ')})`;
  if (ending.stoppedBy === 'timeout')
    lines.push(
      `stopped: still running after ${ending.seconds} second${ending.seconds === 1 ? '' : 's'}, so it was ${killed} with every process it started`,
    );
  else if (ending.stoppedBy === 'limit')
    lines.push(`stopped: it went over a limit (below), so it was ${killed} with every process it started`);
  else if (ending.stoppedBy === 'cancelled')
    lines.push(`stopped: the call was cancelled, so it was ${killed} with every process it started`);
  else if (ending.reportsLeftovers && ending.signals.length > 0)
    lines.push(`note: it left processes running in the background; they were ${killed}`);
  const { code, signal } = ending.status;
  lines.push(
    code !== null
      ? `exit code: ${code}${signalNote(code, ending.signalsAsCodes)}`
      : `exit: killed by signal ${signal}`,
  );
  lines.push(...(ending.notes ?? []));
  if (!ending.complete)
    lines.push('note: output may be incomplete: a process that left its process group kept it open');
  const [outShare, errShare] = shares(ending.stdout.size, ending.stderr.size, charLimit);
  lines.push(ending.stdout.render('stdout', outShare), ending.stderr.render('stderr', errShare));
  return lines.join('\n');
}

/** For 128 + n, the signal n it may stand for. */
function signalNote(code: number, signalsAsCodes: boolean): string {
  if (!signalsAsCodes || code <= 128) return '';
  const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0];
  return name === undefined ? '' : ` (killed by signal ${name}, or it exited with ${code})`;
}

/** Splits the character budget: each stream gets what it needs, or half when both need more. */
function shares(stdout: number, stderr: number, limit: number): [number, number] {
  const half = Math.floor(limit / 2);
  if (stdout + stderr <= limit) return [stdout, stderr];
  if (stdout <= half) return [stdout, limit - stdout];
  if (stderr <= half) return [limit - stderr, stderr];
  return [half, limit - half];
}
