import type { ModelInput } from '../contract/model-request.js';
import type { RunEvent } from '../contract/run-state.js';
import type { Usage } from '../contract/usage.js';
import type { ConversationSnapshot } from './conversation.js';

/**
 * What the next model turn sends, before it is turned into a request: `idle` means a session waits
 * for a message. Stateless runs keep the content in their conversation instead.
 */
export type NextInput =
  | { kind: 'task' }
  | Extract<ModelInput, { kind: 'observations' }>
  | { kind: 'messages'; previousResponseId: string | null }
  | { kind: 'idle' };

/**
 * Everything a run hands to the next workflow execution when it continues as new, at a turn
 * boundary. The run input travels beside it unchanged (budgets and the approvals policy are in it),
 * so the run is the same run: same workflow id, same totals, same place in the conversation.
 */
export interface Carried {
  turn: number;
  toolCalls: number;
  usage: Usage;
  usageByTurn: Usage[];
  lastResponseId: string | null;
  lastText: string;
  lastAnswer: string | null;
  answers: number;
  events: RunEvent[];
  continuedAsNew: number;
  /** Epoch milliseconds when the first execution started: the time budget counts from it. */
  startedAtMs: number;
  next: NextInput;
  /** Messages sent but not yet delivered. */
  queue: string[];
  /** A stateless run's conversation, compacted. */
  conversation?: ConversationSnapshot;
  /** An endSession update arrived. */
  ending: boolean;
}
