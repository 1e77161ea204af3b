import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { KeelPlugin } from 'keel';
import * as activities from './activities.js';
import { lookupOrder } from './tools.js';

const connection = await NativeConnection.connect({
  address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
});

// Keel on the team's own worker: model turns through the `openai` SDK (OPENAI_API_KEY,
// OPENAI_BASE_URL), the team's zod tool, and the tools of an MCP server it already runs.
const keel = new KeelPlugin({
  openai: new OpenAI(),
  defaultModel: 'gpt-5-mini',
  tools: [lookupOrder],
  mcpServers: [
    {
      name: 'policies', // the model sees its tools as policies__read_text_file, …
      command: 'node_modules/.bin/mcp-server-filesystem',
      args: [fileURLToPath(new URL('../policies', import.meta.url))],
      allowTools: ['read_text_file'],
    },
  ],
});

const worker = await Worker.create({
  connection,
  taskQueue: 'orders',
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
  activities, // the team's own, beside Keel's `keel.`-prefixed ones
  plugins: [keel],
});
console.log('worker ready');
await worker.run(); // until SIGINT or SIGTERM; the MCP server stops with it
await connection.close();
