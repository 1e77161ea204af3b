import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { Observation } from '../../src/contract/observation.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { createRunCommandTool } from '../../src/tools/builtin/run-command.js';
import type { RunCommandOptions } from '../../src/tools/builtin/run-command.js';
import type { ToolContext } from '../../src/tools/define-tool.js';
import { executeToolCall } from '../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../src/tools/idempotency.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Workspace } from '../../src/tools/workspace.js';
import { silentLogger } from './loggers.js';

/**
 * Runs one run_command call through the executor, as the worker would, with no secret redaction: a
 * test of the sandbox must see what a command could read, not what the sanitizer would hide.
 */
export function runCommandCall(
  workspace: Workspace,
  args: Record<string, unknown>,
  options: RunCommandOptions,
  signal?: AbortSignal,
): Promise<Observation> {
  return executeToolCall(
    {
      call: { callId: 'call_1', name: 'run_command', argumentsJson: JSON.stringify(args) },
      idempotencyKey: 'run:call_1',
      outputCharLimit: 100_000,
      ...(signal ? { signal } : {}),
    },
    {
      registry: new ToolRegistry([createRunCommandTool(options, workspace)]),
      sanitizer: createSanitizer({ paths: [] }),
      logger: silentLogger,
      idempotencyStore: new MemoryIdempotencyStore(),
    },
  );
}

/** A tool context for calling `tool.execute` directly. */
export function directContext(
  signal: AbortSignal,
  heartbeat: (details?: unknown) => void = () => undefined,
): ToolContext {
  return {
    signal,
    callId: 'call_1',
    idempotencyKey: 'run:call_1',
    heartbeat,
    once: (_step, effect) => Promise.resolve(effect()),
  };
}

/** The text of an ok observation, or the message of a refused one, with which it was. */
export function outcome(observation: Observation): { ok: boolean; text: string } {
  return observation.ok ? { ok: true, text: observation.output } : { ok: false, text: observation.message };
}

/**
 * The run_command options that make this test's own Node visible in the sandbox: nothing when it is
 * under /usr, else its installation directory (nvm, a tool cache) as a read-only path.
 */
export function nodeVisible(): Pick<RunCommandOptions, 'readOnlyPaths'> {
  const node = realpathSync(process.execPath);
  return node.startsWith('/usr/') ? {} : { readOnlyPaths: [path.dirname(path.dirname(node))] };
}
