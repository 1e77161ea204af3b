/** The smallest loop that shows the wait: `steps` trivial activities, one after another. */
import { proxyActivities } from '@temporalio/workflow';

const { echo } = proxyActivities<{ echo(value: number): Promise<number> }>({
  startToCloseTimeout: '10s',
});

/** Calls `echo` `steps` times in a row; each call is one activity task and one workflow task. */
export async function trivialLoop(steps: number): Promise<number> {
  let sum = 0;
  for (let step = 0; step < steps; step++) sum += await echo(step);
  return sum;
}
