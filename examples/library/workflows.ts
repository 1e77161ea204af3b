import { proxyActivities } from '@temporalio/workflow';
import type * as activities from './activities.js';

// Keel's agent workflow, bundled with the team's own workflows.
export { agentRun } from 'keel/workflow';

const { composeGreeting } = proxyActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });

/** The team's own workflow, in the same worker as Keel's. */
export async function greet(name: string): Promise<string> {
  return await composeGreeting(name);
}
