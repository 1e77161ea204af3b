/**
 * The zod schemas of what a workflow carries across continue-as-new and reads from its children.
 * Workflow code imports only their types: at run time it checks values against plans generated
 * from these schemas (`input-plans.ts`, `npm run schemas`), so no zod is evaluated for every run.
 */
import { z } from 'zod';
import { ConversationItem } from '../contract/conversation-item.js';
import { EvalCaseEnding } from '../contract/eval-input.js';
import { FailureType } from '../contract/failure-type.js';
import { ObservationsInput } from '../contract/observations-input.js';
import { RunEvent } from '../contract/run-event.js';
import { StreamItem } from '../contract/stream-event.js';
import { Usage } from '../contract/usage.js';

/** What a stateless conversation carries across continue-as-new. */
export const ConversationSnapshot = z.object({
  /** Items by turn: the first group holds the task; each later one a turn's output, results and messages. */
  groups: z.array(z.array(ConversationItem)),
  /** Turns dropped from the front to keep the conversation within its size. */
  omittedTurns: z.number().int().nonnegative(),
});
export type ConversationSnapshot = z.infer<typeof ConversationSnapshot>;

/** What one execution's stream hands the next: where offsets continue, and the newest events. */
export const CarriedStream = z.object({
  head: z.number().int().nonnegative(),
  items: z.array(StreamItem),
});
export type CarriedStream = z.infer<typeof CarriedStream>;

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
  /** Answers in a row sent back for not matching the output schema. */
  outputRetries: z.number().int().nonnegative().optional(),
});
export type Carried = z.infer<typeof Carried>;

/**
 * What an eval hands to its next execution when its history grows long: how the cases before the
 * next one to start ended, in input order (the case ids and run ids follow from the input).
 */
export const EvalCarried = z.object({
  ended: z.array(z.object({ status: EvalCaseEnding.shape.status, errorType: FailureType.optional() })),
});
export type EvalCarried = z.infer<typeof EvalCarried>;

/** What a parent reads from a sub-agent's result: how it ended, its answer, and what it spent. */
export const ChildEnding = z.object({
  status: EvalCaseEnding.shape.status,
  finalText: z.string().optional(),
  output: z.unknown().optional(),
  lastText: z.string().optional(),
  partialText: z.string().optional(),
  reason: z.string().optional(),
  usage: Usage,
  costUsd: z.number().optional(),
});
export type ChildEnding = z.infer<typeof ChildEnding>;

/** How a child run ended, as its result or its failure's details say. */
export const CaseStatus = z.object({
  status: EvalCaseEnding.shape.status,
  errorType: FailureType.optional(),
});
export type CaseStatus = z.infer<typeof CaseStatus>;
