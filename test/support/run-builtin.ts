import type { Observation } from '../../src/contract/observation.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { executeToolCall } from '../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../src/tools/idempotency.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Workspace } from '../../src/tools/workspace.js';
import { silentLogger } from './loggers.js';

/** Runs one built-in tool call through the executor, as the worker would, with a generous output cap. */
export function runBuiltin(
  workspace: Workspace,
  name: string,
  args: Record<string, unknown>,
): Promise<Observation> {
  return executeToolCall(
    {
      call: { callId: 'call_1', name, argumentsJson: JSON.stringify(args) },
      idempotencyKey: 'run:call_1',
      outputCharLimit: 100_000,
    },
    {
      registry: new ToolRegistry(fileTools(workspace)),
      sanitizer: createSanitizer({ paths: [{ path: workspace.root, label: '.' }] }),
      logger: silentLogger,
      idempotencyStore: new MemoryIdempotencyStore(),
    },
  );
}
