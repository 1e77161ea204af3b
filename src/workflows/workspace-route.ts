import { ActivityFailure, patched, TimeoutFailure } from '@temporalio/workflow';
import type { Observation } from '../contract/observation.js';
import type { WorkerProfile } from '../contract/tool-info.js';
import { keelActivities } from './keel-activities.js';
import type { ActivityNames } from './keel-activities.js';

/**
 * Marks the executions that send a run's tool calls to the worker holding its workspace (the worker
 * said its runs' workspaces are its own). Histories from before it replay as they ran, on the shared queue.
 */
export const WORKSPACE_AFFINITY_PATCH = 'keel-workspace-affinity';

/** Longest the making of a workspace may take (a clone of a large repository). */
const OPEN_WORKSPACE_TIMEOUT = '15m';

/** Where a run's workspace is: the task queue of the worker that made it, once one did. */
export interface WorkspaceRoute {
  /** A call not picked up from that queue within this long means the worker is gone. */
  failoverSeconds: number;
  /** The holder's own task queue; undefined until the first call, and again once it was lost. */
  queue: string | undefined;
  /** The workspace being opened, for calls that run together to wait on the same one. */
  opening: Promise<string> | undefined;
}

/**
 * The run's route when its worker pins workspaces (and the execution takes the patch), carrying the
 * queue an earlier execution found; undefined when calls go to the shared queue as before.
 */
export function workspaceRoute(
  profile: WorkerProfile,
  carriedQueue: string | undefined,
): WorkspaceRoute | undefined {
  // Asked only of workers that pin, so runs elsewhere record no marker.
  if (profile.workspaceAffinity === undefined || !patched(WORKSPACE_AFFINITY_PATCH)) return undefined;
  return {
    failoverSeconds: profile.workspaceAffinity.failoverSeconds,
    queue: carriedQueue,
    opening: undefined,
  };
}

/**
 * The queue the run's next call goes to: the holder's, or, when none holds the workspace (the first
 * call, or after a loss), the one that answers `openWorkspace` on the shared queue, which makes it.
 */
export function workspaceQueue(
  route: WorkspaceRoute,
  names: ActivityNames,
  heartbeatTimeoutSeconds: number,
): Promise<string> {
  if (route.queue !== undefined) return Promise.resolve(route.queue);
  route.opening ??= keelActivities(names, {
    startToCloseTimeout: OPEN_WORKSPACE_TIMEOUT,
    heartbeatTimeout: `${heartbeatTimeoutSeconds}s`,
    retry: { maximumAttempts: 5 },
    summary: 'open workspace',
  })
    .openWorkspace()
    .then(({ taskQueue }) => {
      route.queue = taskQueue;
      return taskQueue;
    })
    .finally(() => {
      route.opening = undefined;
    });
  return route.opening;
}

/** Whether a call failed because nobody took it from the holder's queue in time: the holder is gone. */
export function isWorkspaceLost(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof TimeoutFailure &&
    error.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}

/** Forgets the holder `queue` (unless a newer one replaced it) and tells the model what that means. */
export function workspaceLost(route: WorkspaceRoute, queue: string, callId: string): Observation {
  if (route.queue === queue) route.queue = undefined;
  return {
    callId,
    ok: false,
    error: 'workspace_lost',
    message:
      "The worker that held this run's workspace is gone, and the workspace with it: files written or " +
      'changed there are lost. This call was not completed (it may have partly run before). The next ' +
      'call gets a new workspace, as it was at the start of the run; redo what is still needed.',
  };
}
