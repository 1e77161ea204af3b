import { ACTIVITY_NAMES } from '../../src/contract/activity-names.js';

/** Waits until each run has a started (not just scheduled) callModel activity that has heartbeated. */
export async function waitUntilModelTurnsStarted(
  runIds: string[],
  client: { workflow: { getHandle(id: string): { describe(): Promise<{ raw: DescribeRaw }> } } },
): Promise<void> {
  for (;;) {
    const started = await Promise.all(
      runIds.map(async (runId) => {
        const { raw } = await client.workflow.getHandle(runId).describe();
        return (raw.pendingActivities ?? []).some(
          (activity) =>
            activity.activityType?.name === ACTIVITY_NAMES.callModel &&
            activity.lastStartedTime &&
            activity.lastHeartbeatTime,
        );
      }),
    );
    if (started.every(Boolean)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What the tests read of a `describe`: the pending activities. */
interface DescribeRaw {
  pendingActivities?: Array<{
    activityType?: { name?: string | null } | null;
    attempt?: number | null;
    lastStartedTime?: unknown;
    lastHeartbeatTime?: unknown;
  }> | null;
}
