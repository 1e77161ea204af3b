/** Prefix of the lines a worker process prints to tell the test what happened inside it. */
export const EVENT_PREFIX = 'KEEL-EVENT ';

/** Something a worker process reports: its type plus whatever fields the reporter adds. */
export interface ProcessEvent {
  type: string;
  pid: number;
  /** `Date.now()` in the worker process when it happened. */
  at: number;
  [field: string]: unknown;
}

/** Reports an event from inside a worker process (one line on stdout). */
export function emit(type: string, fields: Record<string, unknown> = {}): void {
  const event: ProcessEvent = { type, pid: process.pid, at: Date.now(), ...fields };
  process.stdout.write(`${EVENT_PREFIX}${JSON.stringify(event)}\n`);
}
