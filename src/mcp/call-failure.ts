import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logger.js';
import { ToolError } from '../tools/tool-error.js';

/**
 * The tool error for an MCP call that failed without a result: what the model may read. A protocol
 * error's message comes from the server and is shown (the executor redacts it); a lost connection
 * or a transport failure is described without its details, which go to the worker log.
 */
export function callFailure(
  error: unknown,
  where: { server: string; tool: string; callId: string },
  logger: Logger,
): ToolError {
  if (error instanceof McpError) {
    // Open on purpose: a server may answer with any JSON-RPC code, known to the SDK or not.
    // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check
    switch (error.code as ErrorCode) {
      case ErrorCode.ConnectionClosed:
        logger.warn(`MCP server ${where.server} stopped during a call of ${where.tool}`, {
          callId: where.callId,
        });
        return new ToolError(
          `The MCP server ${where.server} stopped during the call of ${where.tool}; it is started again for the next call.`,
        );
      case ErrorCode.RequestTimeout:
        return new ToolError(
          `The MCP server ${where.server} did not answer the call of ${where.tool} in time.`,
        );
      default:
        logger.warn(`MCP server ${where.server} refused a call of ${where.tool}`, {
          callId: where.callId,
          error,
        });
        return new ToolError(`${where.tool} failed: ${error.message}`);
    }
  }
  logger.error(`MCP server ${where.server} could not be reached for ${where.tool}`, {
    callId: where.callId,
    error,
  });
  return new ToolError(
    `The MCP server ${where.server} could not be reached for ${where.tool} (reference ${where.callId}); the details are in the worker log.`,
  );
}
