/**
 * The names Keel's activities are registered under. They carry a `keel.` prefix so that a worker
 * hosting its own activities beside Keel's cannot collide with them.
 */
export const ACTIVITY_NAMES = {
  describeWorker: 'keel.describeWorker',
  callModel: 'keel.callModel',
  executeTool: 'keel.executeTool',
  openWorkspace: 'keel.openWorkspace',
  checkGuardrails: 'keel.checkGuardrails',
} as const;

/** The unprefixed names runs recorded before the prefix still schedule, and workers still answer. */
export const LEGACY_ACTIVITY_NAMES = {
  describeWorker: 'describeWorker',
  callModel: 'callModel',
  executeTool: 'executeTool',
  // Added after the prefix: no run ever scheduled it under another name.
  openWorkspace: 'keel.openWorkspace',
  checkGuardrails: 'keel.checkGuardrails',
} as const;

/** One of Keel's activities. */
export type KeelActivityName = keyof typeof ACTIVITY_NAMES;
