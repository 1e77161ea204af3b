import { z } from 'zod';
import { MAX_QUEUED_MESSAGES } from './defaults.js';

/** Argument of the `approve` update: let a waiting call run, as the model wrote it or with edited arguments. */
export const ApproveArgs = z.strictObject({
  callId: z.string().min(1).describe('The call to approve (from the state query or `keel status`).'),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "Arguments to run the call with instead of the model's, checked against the tool's schema; the model is told.",
    ),
  note: z.string().max(2_000).optional().describe('Why, for the record and the model.'),
});
export type ApproveArgs = z.infer<typeof ApproveArgs>;

/** Argument of the `reject` update: the call does not run; the model sees the reason. */
export const RejectArgs = z.strictObject({
  callId: z.string().min(1).describe('The call to reject.'),
  reason: z.string().max(2_000).optional().describe('Why: the model sees it and can try another way.'),
});
export type RejectArgs = z.infer<typeof RejectArgs>;

/** What `approve` and `reject` answer. */
export const ApprovalDecision = z.object({
  callId: z.string(),
  decision: z.enum(['approved', 'rejected']),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** Argument of the `send` update: a user message for the model, delivered at the next turn boundary. */
export const SendArgs = z.strictObject({
  text: z.string().trim().min(1, 'must not be empty').max(200_000).describe('The message.'),
});
export type SendArgs = z.infer<typeof SendArgs>;

/** What `send` answers: the message is queued. */
export const SendReceipt = z.object({
  /** Messages waiting for the next turn, this one included (at most {@link MAX_QUEUED_MESSAGES}). */
  queued: z.number().int().positive().max(MAX_QUEUED_MESSAGES),
});
export type SendReceipt = z.infer<typeof SendReceipt>;
