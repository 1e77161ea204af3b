import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { callFailure } from '../../src/mcp/call-failure.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { RecordingLogger } from '../support/loggers.js';

const where = { server: 'remote', tool: 'remote__deploy', callId: 'call_7' };

describe('callFailure', () => {
  it("shows a protocol error's message, which the executor's sanitizer strips of stack frames and secrets", () => {
    const logger = new RecordingLogger();
    const error = new McpError(
      ErrorCode.InternalError,
      'deploy exploded with key sk-live-abcdefghijklmnop\n    at deploy (/srv/mcp/tools/deploy.js:10:5)\n    at run (/srv/mcp/server.js:88:3)',
    );
    const failure = callFailure(error, where, logger);
    expect(failure).toBeInstanceOf(ToolError);
    const shown = createSanitizer().message(failure.message);
    expect(shown).toContain('remote__deploy failed: MCP error -32603: deploy exploded');
    expect(shown).not.toContain('/srv/mcp');
    expect(shown).not.toContain('sk-live-abcdefghijklmnop');
    expect(logger.entries[0]?.meta?.error).toBe(error);
  });

  it('describes a transport failure without its details, which go to the worker log', () => {
    const logger = new RecordingLogger();
    const error = new TypeError('fetch failed: connect ECONNREFUSED 10.0.0.7:8443');
    const failure = callFailure(error, where, logger);
    expect(failure.message).toBe(
      'The MCP server remote could not be reached for remote__deploy (reference call_7); the details are in the worker log.',
    );
    expect(logger.entries).toEqual([
      {
        level: 'error',
        message: 'MCP server remote could not be reached for remote__deploy',
        meta: { callId: 'call_7', error },
      },
    ]);
  });
});
