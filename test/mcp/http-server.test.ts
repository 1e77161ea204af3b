import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServers } from '../../src/mcp/index.js';
import { executeToolCall } from '../../src/tools/executor.js';
import { RecordingLogger } from '../support/loggers.js';
import { callOf, executorDependencies, isAlive, startHttpEverythingServer } from './support/servers.js';
import type { HttpServer } from './support/servers.js';

const TOKEN = 'http-bearer-token-5f1c9a7e';
let server: HttpServer;
const opened: McpServers[] = [];

beforeAll(async () => {
  server = await startHttpEverythingServer();
});

afterAll(async () => {
  await Promise.all(opened.map((created) => created.close()));
  await server.stop();
});

/** McpServers on the test's HTTP server, closed after the file. */
function httpServers(extra: { timeoutSeconds?: number } = {}): { mcp: McpServers; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  const mcp = new McpServers(
    [{ name: 'remote', url: server.url, headers: { Authorization: `Bearer ${TOKEN}` }, ...extra }],
    { logger },
  );
  opened.push(mcp);
  return { mcp, logger };
}

describe('server-everything over Streamable HTTP', () => {
  it('is the server this test started', () => {
    expect(isAlive(server.process.pid!)).toBe(true);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('lists and calls tools over HTTP, with no process of its own', async () => {
    const { mcp } = httpServers();
    const tools = await mcp.listTools();
    expect(tools.map((tool) => tool.name)).toContain('remote__echo');
    expect(await mcp.pid('remote')).toBeUndefined();
    const deps = executorDependencies(tools, mcp.secrets());
    const observation = await executeToolCall(callOf('remote__get-sum', { a: 2, b: 40 }), deps);
    expect(observation).toMatchObject({ ok: true });
    expect((observation as { output: string }).output).toContain('42');
  });

  it('treats header values as secrets', async () => {
    const { mcp } = httpServers();
    expect(mcp.secrets()).toEqual(expect.arrayContaining([`Bearer ${TOKEN}`, TOKEN]));
    const deps = executorDependencies(await mcp.listTools(), mcp.secrets());
    // A model that gets the server to echo the token back sees it redacted.
    const observation = await executeToolCall(callOf('remote__echo', { message: `token ${TOKEN}` }), deps);
    expect(observation).toEqual({ callId: 'call_1', ok: true, output: 'Echo: token [redacted]' });
  });

  it("stops a call at the tool's timeout as a timeout observation, and the next call works", async () => {
    const { mcp } = httpServers({ timeoutSeconds: 1 });
    const deps = executorDependencies(await mcp.listTools());
    expect(mcp.tool('remote__trigger-long-running-operation')?.timeoutSeconds).toBe(1);
    const observation = await executeToolCall(
      callOf('remote__trigger-long-running-operation', { duration: 30, steps: 30 }),
      deps,
    );
    expect(observation).toMatchObject({ ok: false, error: 'timeout' });
    const next = await executeToolCall(callOf('remote__echo', { message: 'after the timeout' }), deps);
    expect(next).toEqual({ callId: 'call_1', ok: true, output: 'Echo: after the timeout' });
  });
});

describe('an unreachable Streamable HTTP server', () => {
  it('makes a call a tool error without details, which go to the worker log, and reconnects once it is back', async () => {
    const own = await startHttpEverythingServer();
    const logger = new RecordingLogger();
    const mcp = new McpServers([{ name: 'gone', url: own.url }], { logger });
    opened.push(mcp);
    const deps = executorDependencies(await mcp.listTools());
    await own.stop();
    const observation = await executeToolCall(callOf('gone__echo', { message: 'anyone?' }), deps);
    expect(observation).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message:
        'The MCP server gone could not be reached for gone__echo (reference call_1); the details are in the worker log.',
    });
    expect(logger.entries.some((entry) => entry.level === 'error' && entry.message.includes('gone'))).toBe(
      true,
    );

    // A server back at the same address gets a new session on the next call.
    const back = await startHttpEverythingServer(own.port);
    try {
      const next = await executeToolCall(callOf('gone__echo', { message: 'back again' }), deps);
      expect(next).toEqual({ callId: 'call_1', ok: true, output: 'Echo: back again' });
    } finally {
      await mcp.close();
      await back.stop();
    }
  });

  it('refuses to list the tools of a server that is not there', async () => {
    const own = await startHttpEverythingServer();
    await own.stop();
    const mcp = new McpServers([{ name: 'never', url: own.url }], { logger: new RecordingLogger() });
    opened.push(mcp);
    await expect(mcp.listTools()).rejects.toThrow(/MCP server never could not be started or reached/);
  });
});
