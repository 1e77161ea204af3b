import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunCommandOptions } from '../run-command.js';
import { createRunCommandTool } from '../run-command.js';
import { Workspace } from '../../workspace.js';

/** Longest the probe may take: starting a sandbox takes milliseconds, so this only catches a hang. */
const PROBE_SECONDS = 30;

/**
 * Starts one sandbox the way every call will (same bubblewrap, mounts and namespaces) in an empty
 * temporary workspace and runs `/bin/sh -c 'exit 0'` in it. Resolves when that worked; rejects with
 * bubblewrap's own reason otherwise (no bubblewrap, user namespaces forbidden, a container's profile).
 */
export async function checkSandbox(options: RunCommandOptions): Promise<void> {
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-sandbox-probe-'));
  try {
    const tool = createRunCommandTool(
      { ...options, allow: ['/bin/sh'], timeoutSeconds: PROBE_SECONDS },
      await Workspace.open(directory),
    );
    const output = await tool.execute(
      { program: '/bin/sh', args: ['-c', 'exit 0'], cwd: '.' },
      {
        signal: new AbortController().signal,
        callId: 'sandbox-probe',
        idempotencyKey: 'sandbox-probe',
        heartbeat: () => undefined,
        once: (_step, effect) => Promise.resolve(effect()),
      },
    );
    if (typeof output !== 'string' || !output.startsWith('exit code: 0\n')) {
      throw new Error(`a test command in the sandbox did not succeed: ${JSON.stringify(output)}`);
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
