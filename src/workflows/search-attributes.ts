import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Where a run is: `running`, `awaiting_approval`, `idle` (a session waiting for a message); how it
 * ended (`completed`, `max_turns`, `max_tokens`, `max_time`, `max_cost`, `incomplete`, `failed`,
 * `cancelled`); or, on an execution that continued as new, `continued` (the run goes on in the next).
 */
export const keelStatus = defineSearchAttributeKey('KeelStatus', SearchAttributeType.KEYWORD);

/** The model the run uses. */
export const keelModel = defineSearchAttributeKey('KeelModel', SearchAttributeType.KEYWORD);

/** Model turns taken so far. */
export const keelTurns = defineSearchAttributeKey('KeelTurns', SearchAttributeType.INT);

/** Total tokens used so far. */
export const keelTokens = defineSearchAttributeKey('KeelTokens', SearchAttributeType.INT);

/**
 * The custom search attributes Keel runs carry, so runs can be filtered in the Temporal UI and with
 * visibility queries (`KeelStatus = "failed"`). A namespace must register them before runs can set
 * them; the worker does that itself where it may (the dev server), else they must be added once.
 */
export const keelSearchAttributes = [keelStatus, keelModel, keelTurns, keelTokens] as const;
