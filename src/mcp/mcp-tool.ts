import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_TOOL_TIMEOUT_SECONDS } from '../contract/defaults.js';
import type { Logger } from '../logger.js';
import type { ArgumentsResult, Tool, ToolContext, ToolOutput } from '../tools/define-tool.js';
import { prepareArguments } from '../tools/strict-schema.js';
import { ToolError } from '../tools/tool-error.js';
import { compileArgumentValidator } from './argument-validator.js';
import { callFailure } from './call-failure.js';
import { mcpToolParameters } from './input-schema.js';
import type { McpServerConnection } from './server-connection.js';
import { toolResultText } from './tool-result.js';

/** Characters of a progress message kept in heartbeat details. */
const MAX_PROGRESS_MESSAGE = 200;

/**
 * A Keel tool that calls one tool of an MCP server, so the executor and the activities run it like any
 * other: arguments are validated against the server's schema before the call, the call is cancelled
 * with the activity, progress notifications become heartbeats, and an `isError` result or a failed
 * call becomes a tool error (an observation for the model).
 */
export function createMcpTool(
  connection: McpServerConnection,
  definition: McpTool,
  name: string,
  logger: Logger,
): Tool {
  const config = connection.config;
  const { parameters, strict, schema, notStrictBecause } = mcpToolParameters(definition.inputSchema);
  const validate = compileArgumentValidator(schema, definition.inputSchema.$schema);
  if (!strict) logger.info(`MCP tool ${name} is offered without strict mode (${notStrictBecause})`);
  const approval =
    config.needsApproval === true ||
    (Array.isArray(config.needsApproval) && config.needsApproval.includes(definition.name))
      ? 'always'
      : 'never';
  return Object.freeze({
    name,
    description:
      definition.description ??
      definition.title ??
      `The ${definition.name} tool of the MCP server ${config.name}.`,
    // A hint from the server, used only to let calls run side by side, never to skip approval.
    readOnly: definition.annotations?.readOnlyHint === true,
    timeoutSeconds: config.timeoutSeconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS,
    parameters,
    strict,
    approval,
    needsApproval: () => Promise.resolve(approval === 'always'),
    local: false,
    parseArguments(value: unknown): ArgumentsResult {
      // Strict mode makes the model send null for an optional property: drop those, and name keys the
      // closed strict schema does not have, before the server's own schema judges the rest.
      const prepared = strict ? prepareArguments(value, schema) : { value, unknownKeys: [] };
      const issues = [...validate(prepared.value), ...prepared.unknownKeys];
      return issues.length === 0 ? { ok: true, input: prepared.value } : { ok: false, issues };
    },
    async execute(input: unknown, context: ToolContext): Promise<ToolOutput> {
      let result;
      try {
        result = await connection.callTool(definition.name, input as Record<string, unknown>, {
          signal: context.signal,
          onProgress: (progress) =>
            context.heartbeat({
              progress: progress.progress,
              ...(progress.total === undefined ? {} : { total: progress.total }),
              ...(progress.message === undefined
                ? {}
                : { message: progress.message.slice(0, MAX_PROGRESS_MESSAGE) }),
            }),
        });
      } catch (error) {
        // The executor tells a timeout from a cancellation by the signal; keep its reason.
        if (context.signal.aborted) throw error;
        throw callFailure(error, { server: config.name, tool: name, callId: context.callId }, logger);
      }
      const text = toolResultText(result);
      if (result.isError === true) throw new ToolError(`${name} failed: ${text}`);
      return text;
    },
  });
}
