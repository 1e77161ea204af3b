import { z } from 'zod';
import { ObservationsInput } from '../contract/observations-input.js';
import { RunEvent } from '../contract/run-event.js';
import { Usage } from '../contract/usage.js';
import { ConversationSnapshot } from './conversation.js';
import { CarriedStream } from './stream-log.js';

/**
 * What the next model turn sends, before it is turned into a request: `idle` means a session waits
 * for a message. Stateless runs keep the content in their conversation instead.
 */
export const NextInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('task') }),
  ObservationsInput,
  z.object({ kind: z.literal('messages'), previousResponseId: z.string().nullable() }),
  z.object({ kind: z.literal('idle') }),
]);
export type NextInput = z.infer<typeof NextInput>;

/**
 * Everything a run hands to the next workflow execution when it continues as new, at a turn
 * boundary. The run input travels beside it unchanged (budgets and the approvals policy are in it),
 * so the run is the same run: same workflow id, same totals, same place in the conversation.
 * Parsed, not trusted, when an execution starts: fields a newer worker adds are dropped. A field
 * added later must be optional, since executions of running workflows carry state without it.
 */
export const Carried = z.object({
  turn: z.number().int().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  usage: Usage,
  usageByTurn: z.array(Usage),
  lastResponseId: z.string().nullable(),
  lastText: z.string(),
  lastAnswer: z.string().nullable(),
  answers: z.number().int().nonnegative(),
  events: z.array(RunEvent),
  continuedAsNew: z.number().int().nonnegative(),
  /** Epoch milliseconds when the first execution started: the time budget counts from it. */
  startedAtMs: z.number(),
  next: NextInput,
  /** Messages sent but not yet delivered. */
  queue: z.array(z.string()),
  /** A stateless run's conversation, compacted. */
  conversation: ConversationSnapshot.optional(),
  /** An endSession update arrived. */
  ending: z.boolean(),
  /** The task queue of the worker holding the run's workspace, when its worker pins workspaces. */
  workspaceQueue: z.string().optional(),
  /** Where the stream's offsets continue, and its newest events. */
  stream: CarriedStream.optional(),
  /** A replayed run's count of answers used, per distinct recorded call (see `ReplayCalls.uses`). */
  replayUses: z.array(z.number().int().nonnegative()).optional(),
});
export type Carried = z.infer<typeof Carried>;
