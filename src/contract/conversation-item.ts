import { z } from 'zod';

/** A Responses API input item, as plain JSON (stateless runs keep them in the workflow). */
export const ConversationItem = z.record(z.string(), z.unknown());
export type ConversationItem = z.infer<typeof ConversationItem>;
