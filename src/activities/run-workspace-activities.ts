import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from '../logger.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ActivityDependencies } from './create-activities.js';
import { withHeartbeats } from './heartbeat.js';

/** What `openWorkspace` answers: the task queue of the worker that holds the run's workspace. */
export interface OpenedWorkspace {
  taskQueue: string;
}

/**
 * The parts of the activities that deal with a run's own workspace: the registry its calls are served
 * from, and `openWorkspace`, which makes the workspace on this worker and names the worker's own queue.
 */
export function runWorkspaceActivities(dependencies: ActivityDependencies, logger: () => Logger) {
  const { registry, sanitizer } = dependencies;

  /** The run's own tools; a workspace that cannot be made (a clone failing) fails the call, to be retried. */
  const runRegistry = async (workflowId: string): Promise<ToolRegistry> => {
    if (dependencies.registryFor === undefined) return registry;
    try {
      return await dependencies.registryFor(workflowId);
    } catch (error) {
      logger().warn("The run's workspace could not be made", { error });
      throw ApplicationFailure.retryable(
        sanitizer.message(`The run's workspace could not be made: ${(error as Error).message}`),
        'WorkspaceUnavailable',
      );
    }
  };

  /**
   * Makes the run's workspace on this worker (a clone may take a while: it heartbeats) and names the
   * task queue only this worker polls, where the run sends its workspace's tool calls from now on.
   */
  const openWorkspace = async (): Promise<OpenedWorkspace> => {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId ?? 'standalone';
    const taskQueue = dependencies.workspaceAffinity?.ownQueue();
    if (taskQueue === undefined) {
      // Not (yet) polling its own queue: another worker, or this one a moment later, takes the retry.
      throw ApplicationFailure.retryable(
        'This worker does not poll its own task queue yet',
        'WorkspaceUnavailable',
      );
    }
    await withHeartbeats(() => runRegistry(workflowId));
    return { taskQueue };
  };

  return { runRegistry, openWorkspace };
}
