import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { McpServers } from '../../src/mcp/index.js';
import { executeToolCall, executeUnlessApprovalNeeded } from '../../src/tools/executor.js';
import { RecordingLogger } from '../support/loggers.js';
import { callOf, executorDependencies, filesystemServer, temporaryDirectory } from './support/servers.js';

let base: string;
let allowed: string;
let outside: string;
const opened: McpServers[] = [];

/** McpServers closed after the file, whatever a test does. */
function servers(...args: ConstructorParameters<typeof McpServers>): McpServers {
  const created = new McpServers(...args);
  opened.push(created);
  return created;
}

beforeAll(async () => {
  base = await temporaryDirectory('keel-mcp-fs-');
  allowed = path.join(base, 'allowed');
  outside = path.join(base, 'outside');
  await mkdir(allowed);
  await mkdir(outside);
  await writeFile(path.join(allowed, 'notes.txt'), 'first line\nsecond line\n');
  await writeFile(path.join(outside, 'private.txt'), 'the private text');
});

afterAll(async () => {
  await Promise.all(opened.map((created) => created.close()));
  await rm(base, { recursive: true, force: true });
});

describe('server-filesystem over stdio', () => {
  it('lists its tools under the server name, strict where the schema allows', async () => {
    const tools = await servers([filesystemServer('fs', allowed)], {
      logger: new RecordingLogger(),
    }).listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain('fs__read_text_file');
    expect(names).toContain('fs__write_file');
    expect(names.every((name) => name.startsWith('fs__'))).toBe(true);

    const read = tools.find((tool) => tool.name === 'fs__read_text_file')!;
    expect(read.strict).toBe(true);
    expect(read.readOnly).toBe(true);
    expect(read.local).toBe(false);
    expect(read.approval).toBe('never');
    // Optional properties become required and nullable, every object closed, as strict mode demands.
    expect(read.parameters).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['path', 'tail', 'head'],
      properties: { head: { type: ['number', 'null'] } },
    });
    expect(read.parameters).not.toHaveProperty('$schema');
    expect(tools.find((tool) => tool.name === 'fs__write_file')!.readOnly).toBe(false);
  });

  it('reads a file in the allowed directory through the executor, a null optional argument dropped', async () => {
    const mcp = servers([filesystemServer('fs', allowed)], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const observation = await executeToolCall(
      callOf('fs__read_text_file', { path: path.join(allowed, 'notes.txt'), head: 1, tail: null }),
      deps,
    );
    expect(observation).toEqual({ callId: 'call_1', ok: true, output: 'first line' });
  });

  it('turns a refused path outside the allowed directory into an error observation', async () => {
    const mcp = servers([filesystemServer('fs', allowed)], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    for (const target of [
      path.join(outside, 'private.txt'),
      path.join(allowed, '..', 'outside', 'private.txt'),
    ]) {
      const observation = await executeToolCall(
        callOf('fs__read_text_file', { path: target, head: null, tail: null }),
        deps,
      );
      expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
      const message = (observation as { message: string }).message;
      expect(message).toMatch(/^fs__read_text_file failed: .*Access denied/);
      expect(message).not.toContain('the private text');
    }
  });

  it('refuses arguments that break the server schema before the server sees them', async () => {
    const mcp = servers([filesystemServer('fs', allowed)], { logger: new RecordingLogger() });
    const deps = executorDependencies(await mcp.listTools());
    const wrongType = await executeToolCall(
      callOf('fs__read_text_file', { path: 7, head: null, tail: null }),
      deps,
    );
    expect(wrongType).toMatchObject({ ok: false, error: 'invalid_arguments' });
    expect((wrongType as { message: string }).message).toContain('- path: must be string');

    const extraKey = await executeToolCall(
      callOf('fs__read_text_file', {
        path: path.join(allowed, 'notes.txt'),
        head: null,
        tail: null,
        mode: 'raw',
      }),
      deps,
    );
    expect(extraKey).toMatchObject({ ok: false, error: 'invalid_arguments' });
    expect((extraKey as { message: string }).message).toContain('unknown key "mode"');

    const notAnObject = await executeToolCall(callOf('fs__read_text_file', '[1,2]'), deps);
    expect(notAnObject).toMatchObject({ ok: false, error: 'invalid_arguments' });
  });

  it('offers only the allow-listed tools; a call of any other is an unknown tool', async () => {
    const mcp = servers(
      [filesystemServer('fs', allowed, { allowTools: ['read_text_file', 'list_directory'] })],
      {
        logger: new RecordingLogger(),
      },
    );
    const tools = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fs__list_directory', 'fs__read_text_file']);
    expect(mcp.tool('fs__write_file')).toBeUndefined();
    expect(mcp.tool('fs__list_directory')).toBe(tools.find((tool) => tool.name === 'fs__list_directory'));

    const deps = executorDependencies(tools);
    const observation = await executeToolCall(
      callOf('fs__write_file', { path: path.join(allowed, 'x.txt'), content: 'written' }),
      deps,
    );
    expect(observation).toMatchObject({ ok: false, error: 'unknown_tool' });
    const listing = await executeToolCall(callOf('fs__list_directory', { path: allowed }), deps);
    expect(listing).toEqual({ callId: 'call_1', ok: true, output: '[FILE] notes.txt' });
  });

  it('refuses an allow-list or approval list that names a tool the server does not offer', async () => {
    const misspelt = servers([filesystemServer('fs', allowed, { allowTools: ['read_txt_file'] })], {
      logger: new RecordingLogger(),
    });
    await expect(misspelt.listTools()).rejects.toThrow(ConfigError);
    await expect(misspelt.listTools()).rejects.toThrow(
      /allowTools names read_txt_file, which the server does not offer/,
    );
    const approval = servers([filesystemServer('fs', allowed, { needsApproval: ['delete_everything'] })], {
      logger: new RecordingLogger(),
    });
    await expect(approval.listTools()).rejects.toThrow(/needsApproval names delete_everything/);
  });

  it('stops a call of a tool that needs approval before it runs', async () => {
    const mcp = servers([filesystemServer('fs', allowed, { needsApproval: ['write_file'] })], {
      logger: new RecordingLogger(),
    });
    const tools = await mcp.listTools();
    expect(mcp.tool('fs__write_file')?.approval).toBe('always');
    expect(mcp.tool('fs__read_text_file')?.approval).toBe('never');
    const deps = executorDependencies(tools);
    const target = path.join(allowed, 'approved.txt');
    const stopped = await executeUnlessApprovalNeeded(
      callOf('fs__write_file', { path: target, content: 'after approval' }),
      deps,
      'check',
    );
    expect(stopped).toEqual({ callId: 'call_1', approvalRequired: true });
    const read = await executeToolCall(
      callOf('fs__read_text_file', { path: target, head: null, tail: null }),
      deps,
    );
    expect(read).toMatchObject({ ok: false, error: 'tool_error' });

    // Once approved, the activity runs the call without the check.
    const written = await executeToolCall(
      callOf('fs__write_file', { path: target, content: 'after approval' }),
      deps,
    );
    expect(written).toMatchObject({ ok: true });
    const after = await executeToolCall(
      callOf('fs__read_text_file', { path: target, head: null, tail: null }),
      deps,
    );
    expect(after).toMatchObject({ ok: true, output: 'after approval' });
  });

  it('refuses a server that cannot be started, with a configuration error naming it', async () => {
    const mcp = servers([{ name: 'missing', command: path.join(base, 'no-such-server') }], {
      logger: new RecordingLogger(),
    });
    await expect(mcp.listTools()).rejects.toThrow(/MCP server missing could not be started or reached/);
  });
});
