// `keel worker --tools ./my-tools.ts` (or KEEL_TOOLS_MODULE): your tools, agents and MCP servers,
// offered beside the built-in tools of the worker's workspace.
import { defineAgent } from 'keel';
import type { McpServerConfig } from 'keel';
import { lookupOrder } from './lookup-order.js';
import { refundOrder } from './refund.js';

export const tools = [lookupOrder, refundOrder];

/** Callers start `{ agent: 'support', task }` (or `keel run --agent support "…"`) without knowing prompts. */
export const agents = [
  defineAgent({
    name: 'support',
    instructions: 'You answer questions about orders. Look the order up before you answer.',
    tools: ['lookup_order', 'refund_order', 'policies__read_text_file'],
    limits: { maxTurns: 8 },
  }),
];

export const mcpServers: McpServerConfig[] = [
  {
    name: 'policies', // its tools reach the model as policies__read_text_file, …
    command: 'npx',
    args: ['--no', 'mcp-server-filesystem', '/srv/policies'],
    allowTools: ['read_text_file'],
  },
  {
    name: 'tickets',
    url: 'https://mcp.example.com/mcp',
    headers: { Authorization: `Bearer ${process.env.TICKETS_TOKEN ?? ''}` }, // redacted everywhere
    needsApproval: ['close_ticket'],
    timeoutSeconds: 120,
  },
];
