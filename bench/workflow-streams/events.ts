/** What the workflow-streams comparison publishes on its one topic, the same kinds as Keel's stream. */
export type StreamedEvent =
  | { type: 'text'; turn: number; delta: string }
  | { type: 'tool_call'; turn: number; callId: string; name: string }
  | { type: 'turn_end'; turn: number }
  | { type: 'end' };

/** The topic every event goes to. */
export const EVENTS_TOPIC = 'events';

/** What a run of the comparison is asked to do. */
export interface StreamedRunInput {
  /** The key the streaming model tells runs apart by. */
  runKey: string;
  turns: number;
  /** The activity's publisher batch interval (ms); the library's default is 2,000, Keel's own 50. */
  batchMs: number;
}

/** One model turn of a run. */
export interface StreamTurnInput extends StreamedRunInput {
  turn: number;
}
