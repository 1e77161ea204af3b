/**
 * The names Keel's activities are registered under. They carry a `keel.` prefix so that a worker
 * hosting its own activities beside Keel's cannot collide with them.
 */
export const ACTIVITY_NAMES = {
  describeWorker: 'keel.describeWorker',
  callModel: 'keel.callModel',
  executeTool: 'keel.executeTool',
} as const;

/** The unprefixed names runs recorded before the prefix still schedule, and workers still answer. */
export const LEGACY_ACTIVITY_NAMES = {
  describeWorker: 'describeWorker',
  callModel: 'callModel',
  executeTool: 'executeTool',
} as const;

/** One of Keel's activities. */
export type KeelActivityName = keyof typeof ACTIVITY_NAMES;
