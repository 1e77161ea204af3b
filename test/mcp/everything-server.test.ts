import { afterAll, describe, expect, it } from 'vitest';
import { McpServers } from '../../src/mcp/index.js';
import { executeToolCall } from '../../src/tools/executor.js';
import { deferred } from '../support/deferred.js';
import { RecordingLogger } from '../support/loggers.js';
import { callOf, everythingServer, executorDependencies, isAlive } from './support/servers.js';

const opened: McpServers[] = [];

/** McpServers closed after the file, whatever a test does. */
function servers(...args: ConstructorParameters<typeof McpServers>): McpServers {
  const created = new McpServers(...args);
  opened.push(created);
  return created;
}

afterAll(async () => {
  await Promise.all(opened.map((created) => created.close()));
});

describe('server-everything over stdio', () => {
  it('sends a schema strict mode cannot express as it is, non-strict, and still validates against it', async () => {
    const mcp = servers([everythingServer('every')], { logger: new RecordingLogger() });
    await mcp.listTools();
    const gzip = mcp.tool('every__gzip-file-as-resource')!;
    // `format: uri` is not a format strict mode knows.
    expect(gzip.strict).toBe(false);
    expect(gzip.parameters).toMatchObject({ properties: { data: { type: 'string', format: 'uri' } } });
    expect(gzip.parameters).not.toHaveProperty('additionalProperties');
    expect(gzip.parseArguments({ name: 7 })).toEqual({ ok: false, issues: ['name: must be string'] });
    expect(gzip.parseArguments({ name: 'a.gz', extra: true })).toEqual({
      ok: true,
      input: { name: 'a.gz', extra: true },
    });
    expect(mcp.tool('every__echo')!.strict).toBe(true);
  });

  it('summarises images instead of sending their bytes, and keeps the text around them', async () => {
    const mcp = servers([everythingServer('every')], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const observation = await executeToolCall(callOf('every__get-tiny-image', {}), deps);
    expect(observation).toMatchObject({ ok: true });
    const output = (observation as { output: string }).output;
    expect(output).toMatch(
      /^Here's the image you requested:\n\[image: image\/png, \d+ bytes, not shown\]\nThe image above/,
    );
    expect(output).not.toContain('iVBORw0KGgo');
    const links = await executeToolCall(callOf('every__get-resource-links', { count: 1 }), deps);
    expect((links as { output: string }).output).toContain('[resource link: ');
  });

  it('keeps configured secrets and the worker environment away from the model', async () => {
    const secret = 'mcp-env-secret-0123456789';
    process.env.KEEL_MCP_TEST_API_KEY = 'worker-own-key-9876543210';
    try {
      const mcp = servers([everythingServer('every', { env: { SERVICE_TOKEN: secret } })], {
        logger: new RecordingLogger(),
      });
      const deps = executorDependencies(await mcp.listTools(), mcp.secrets());
      // A hostile model asks the server for its environment.
      const observation = await executeToolCall(callOf('every__get-env', {}), deps);
      expect(observation).toMatchObject({ ok: true });
      const output = (observation as { output: string }).output;
      expect(output).toContain('SERVICE_TOKEN');
      expect(output).toContain('[redacted]');
      expect(output).not.toContain(secret);
      // The server never got the worker's own variables.
      expect(output).not.toContain('KEEL_MCP_TEST_API_KEY');
      expect(output).not.toContain('worker-own-key');
    } finally {
      delete process.env.KEEL_MCP_TEST_API_KEY;
    }
  });

  it('turns progress notifications into heartbeats', async () => {
    const mcp = servers([everythingServer('every')], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const beats: unknown[] = [];
    const observation = await executeToolCall(
      callOf(
        'every__trigger-long-running-operation',
        { duration: 0.4, steps: 4 },
        { heartbeat: (details) => beats.push(details) },
      ),
      deps,
    );
    expect(observation).toMatchObject({ ok: true });
    expect((observation as { output: string }).output).toContain('Long running operation completed');
    // The SDK handles notifications a tick after they arrive, so the one sent just before the result
    // may find the call finished and be dropped; the earlier ones all arrive, in order.
    const expected = [1, 2, 3, 4].map((progress) => ({ progress, total: 4 }));
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats).toEqual(expected.slice(0, beats.length));
  });

  it('cancels the MCP request when the call is aborted: the server is told', async () => {
    const logger = new RecordingLogger();
    const cancelSeen = deferred<string>();
    const firstProgress = deferred();
    const watching = new RecordingLogger();
    watching.info = (message, meta) => {
      logger.info(message, meta);
      if (message.includes('notifications/cancelled')) cancelSeen.resolve(message);
    };
    const mcp = servers([everythingServer('every', { tap: true })], { logger: watching });
    const deps = executorDependencies(await mcp.listTools());
    const controller = new AbortController();
    const call = executeToolCall(
      callOf(
        'every__trigger-long-running-operation',
        { duration: 60, steps: 60 },
        { signal: controller.signal, heartbeat: () => firstProgress.resolve() },
      ),
      deps,
    );
    const outcome = call.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await firstProgress.promise;
    const reason = new Error('run cancelled');
    controller.abort(reason);
    // The outside cancellation escapes the executor as its reason, as for every tool.
    expect(await outcome).toBe(reason);
    const line = await cancelSeen.promise;
    const sent = logger.entries
      .map((entry) => entry.message)
      .filter((message) => message.includes('tools/call'));
    const callId = (JSON.parse(sent.at(-1)!.replace(/^MCP server every: tap> /, '')) as { id: number }).id;
    expect(JSON.parse(line.replace(/^MCP server every: tap> /, ''))).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: callId },
    });
  });

  it('fails a call whose server is killed as a tool error, and runs the next call on a new process', async () => {
    const mcp = servers([everythingServer('every')], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const firstPid = (await mcp.pid('every'))!;
    expect(isAlive(firstPid)).toBe(true);
    const running = deferred();
    // The executor never rejects for a tool failure; a rejection here would fail the test below.
    const call = executeToolCall(
      callOf(
        'every__trigger-long-running-operation',
        { duration: 60, steps: 60 },
        { heartbeat: () => running.resolve() },
      ),
      deps,
    ).catch((error: unknown) => ({ rejected: error }));
    await running.promise;
    process.kill(firstPid, 'SIGKILL');
    const observation = await call;
    expect(observation).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message:
        'The MCP server every stopped during the call of every__trigger-long-running-operation; it is started again for the next call.',
    });

    const next = await executeToolCall(callOf('every__echo', { message: 'still here' }), deps);
    expect(next).toEqual({ callId: 'call_1', ok: true, output: 'Echo: still here' });
    const secondPid = (await mcp.pid('every'))!;
    expect(secondPid).not.toBe(firstPid);
    expect(isAlive(firstPid)).toBe(false);
  });

  it('leaves no server process behind when closed, and refuses calls afterwards', async () => {
    const mcp = new McpServers([everythingServer('every')], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const pid = (await mcp.pid('every'))!;
    expect(isAlive(pid)).toBe(true);
    await mcp.close();
    expect(isAlive(pid)).toBe(false);
    const observation = await executeToolCall(callOf('every__echo', { message: 'late' }), deps);
    expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
    expect(await mcp.pid('every')).toBeUndefined();
  });
});
