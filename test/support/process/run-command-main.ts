/**
 * A worker-like process for run_command tests: runs one call through the real executor, with this
 * process's own environment (which a test fills with secrets), and prints the observation as JSON.
 * `$WORKER_PID` in the arguments becomes this process's pid, the target of attacks on /proc.
 * Argument: JSON `{ workspace, options, args }`.
 */
import { createSanitizer } from '../../../src/safety/sanitize.js';
import { createRunCommandTool } from '../../../src/tools/builtin/run-command.js';
import type { RunCommandOptions } from '../../../src/tools/builtin/run-command.js';
import { executeToolCall } from '../../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../../src/tools/idempotency.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { silentLogger } from '../loggers.js';

const request = JSON.parse(process.argv[2] ?? '{}') as {
  workspace: string;
  options: RunCommandOptions;
  args: Record<string, unknown>;
};
const args = JSON.parse(
  JSON.stringify(request.args).replaceAll('$WORKER_PID', String(process.pid)),
) as Record<string, unknown>;
const workspace = await Workspace.open(request.workspace);
const observation = await executeToolCall(
  {
    call: { callId: 'call_1', name: 'run_command', argumentsJson: JSON.stringify(args) },
    idempotencyKey: 'run:call_1',
    outputCharLimit: 100_000,
  },
  {
    registry: new ToolRegistry([createRunCommandTool(request.options, workspace)]),
    sanitizer: createSanitizer({ paths: [] }),
    logger: silentLogger,
    idempotencyStore: new MemoryIdempotencyStore(),
  },
);
process.stdout.write(`${JSON.stringify(observation)}\n`);
