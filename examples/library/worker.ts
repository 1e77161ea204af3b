import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { createActivities, createSanitizer, MemoryIdempotencyStore, ToolRegistry, Workspace } from 'keel';
import * as activities from './activities.js';
import { lookupOrder } from './tools.js';

const connection = await NativeConnection.connect({
  address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
});

// Keel's activities: model turns through the `openai` SDK (OPENAI_API_KEY, OPENAI_BASE_URL) and the tools.
const keelActivities = createActivities({
  openai: new OpenAI({ maxRetries: 0 }), // Temporal retries model calls
  defaultModel: 'gpt-5-mini',
  modelMode: 'foreground',
  registry: new ToolRegistry([lookupOrder]),
  workspace: await Workspace.open(process.cwd()),
  sanitizer: createSanitizer(),
  idempotencyStore: new MemoryIdempotencyStore(),
});

const worker = await Worker.create({
  connection,
  taskQueue: 'orders',
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
  activities: { ...activities, ...keelActivities },
});
console.log('worker ready');
await worker.run(); // until SIGINT or SIGTERM
await connection.close();
