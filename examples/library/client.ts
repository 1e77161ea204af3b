import { Client, Connection } from '@temporalio/client';
import { KeelClient } from 'keel/client';
import { greet } from './workflows.js';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
const client = new Client({ connection });

// The team's own workflow and a Keel agent run, served by the same worker.
const greeting = await client.workflow.execute(greet, {
  taskQueue: 'orders',
  workflowId: `greet-${Date.now()}`,
  args: ['Ada'],
});
const keel = new KeelClient(client, 'orders');
const runId = await keel.startRun({ task: 'Where is order A-1?' });
const result = await keel.waitForResult(runId);
console.log(JSON.stringify({ greeting, result }));
await connection.close();
