// The stream's names and limits, apart from its schemas so that workflow code can import them without zod.

/** Most events one read returns. */
export const STREAM_READ_LIMIT = 500;

/** Names of the stream's signal, query and update, for clients in any language. */
export const STREAM_NAMES = {
  publish: 'keel.stream.publish',
  read: 'keel.stream.read',
  wait: 'keel.stream.wait',
} as const;
