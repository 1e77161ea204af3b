import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { STREAM_NAMES } from '../contract/stream-names.js';
import type {
  StreamPublish,
  StreamRead,
  StreamReadArgs,
  StreamWait,
  StreamWaitArgs,
} from '../contract/stream-event.js';

/** A model-turn attempt publishes a batch of its events (text deltas, call starts). */
export const streamPublishSignal = defineSignal<[StreamPublish]>(STREAM_NAMES.publish);

/** The stream's events from an offset; a query, so reading adds nothing to history. */
export const streamReadQuery = defineQuery<StreamRead, [StreamReadArgs]>(STREAM_NAMES.read);

/** Long-polls until the stream has an event past `after`; answers offsets only. */
export const streamWaitUpdate = defineUpdate<StreamWait, [StreamWaitArgs]>(STREAM_NAMES.wait);
