import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunCommandOptions } from '../../../src/tools/builtin/run-command.js';
import { findCgroups } from '../../../src/tools/builtin/run-command/cgroups.js';
import { DEFAULT_LIMITS } from '../../../src/tools/builtin/run-command/limits.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { outcome, runCommandCall } from '../../support/run-command-call.js';

/**
 * A hostile command against each of the sandbox's limits: it tries to take the machine's memory,
 * processes, CPU, RAM-backed /tmp and disk, and the model is told which limit stopped it.
 */
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-limits-')));
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const options: RunCommandOptions = {
  allow: ['sh', 'python3'],
  limits: { memoryMb: 256, processes: 64, cpuSeconds: 2, fileMb: 64, tmpMb: 16 },
};

async function shell(script: string, given: RunCommandOptions = options): Promise<string> {
  const result = outcome(await runCommandCall(workspace, { program: 'sh', args: ['-c', script] }, given));
  expect(result.ok, result.text).toBe(true);
  return result.text;
}

describe('run_command limits', () => {
  it('holds a command to its memory limit, for all its processes together where a cgroup can be made', async () => {
    const cgroups = await findCgroups();
    // Two processes of 160 MB each: each under the limit, together over it.
    const text = await shell(
      `python3 -c "a=b'x'*(160*1024**2); import time; time.sleep(3)" & python3 -c "a=b'x'*(160*1024**2); import time; time.sleep(3)"; r=$?; wait; echo rc=$r`,
    );
    if (cgroups.kind === 'none') {
      // Per process only: each of the two fits.
      expect(text).toContain('rc=0');
      const alone = await shell(`python3 -c "a=b'x'*(400*1024**2)"; echo rc=$?`);
      expect(alone).toContain('MemoryError');
      return;
    }
    expect(text).toContain('limit: a process was killed for going over the memory limit of 256 MB');
    expect(text).toContain('KEEL_RUN_COMMAND_MEMORY_MB');
  });

  it('holds a fork bomb to the process limit and names it', async () => {
    const cgroups = await findCgroups();
    const text = await shell('n=0; while [ $n -lt 500 ]; do sleep 30 & n=$((n + 1)); done; echo started $n');
    expect(text).not.toContain('started 500');
    if (cgroups.kind !== 'none')
      expect(text).toContain(
        'limit: a process or thread could not start: the command reached its limit of 64',
      );
  });

  it('stops a command that spins past its CPU time and names the limit', async () => {
    const text = await shell('python3 -c "while True: pass"');
    expect(text).toContain('exit code: 152');
    expect(text).toContain(
      'limit: it was stopped for using more than 2 s of CPU time (KEEL_RUN_COMMAND_CPU_SECONDS)',
    );
  });

  it('stops a command that writes a file past the file size limit and names it', async () => {
    // dd dies of SIGXFSZ; Python ignores it and gets EFBIG from the write.
    const killed = await shell('dd if=/dev/zero of=big bs=1M count=100');
    expect(killed).toContain('exit code: 153');
    expect(killed).toContain(
      'limit: it was stopped for writing a file larger than 64 MB (KEEL_RUN_COMMAND_FILE_MB)',
    );
    const refused = await shell(`python3 -c "open('big2', 'wb').write(b'x' * (100 * 1024**2))"`);
    expect(refused).toContain('limit: a write may have failed for a file larger than 64 MB');
  });

  it('stops a command that grows the workspace past its cap, though each file is under the file limit', async () => {
    // 8 MB files, one every 50 ms: up to 800 MB in all against a cap of 96 MB. The cap is on the
    // filesystem's free space, so what other processes write there meanwhile counts too (a test
    // file beside this one, a build): the command's own 40 MB at least (five parts) leaves them
    // 56 MB of room before this test could see it stopped sooner than its own writes would.
    const text = await shell(
      'i=0; while [ $i -lt 100 ]; do dd if=/dev/zero of=part$i bs=1M count=8 status=none; i=$((i + 1)); sleep 0.05; done; echo wrote all',
      { ...options, limits: { ...options.limits, workspaceMb: 96 }, timeoutSeconds: 60 },
    );
    expect(text).toMatch(/^stopped: it went over a limit \(below\), so it was killed \(SIGTERM/mu);
    expect(text).toContain(
      "limit: it was stopped for growing the workspace's disk use by more than 96 MB while it ran (KEEL_RUN_COMMAND_WORKSPACE_MB)",
    );
    expect(text).not.toContain('wrote all');
    const parts = (await readdir(root)).filter((name) => name.startsWith('part'));
    expect(parts.length).toBeGreaterThan(4);
    expect(parts.length).toBeLessThan(100);
  });

  it('gives /tmp and HOME a bounded size, not half the machine’s memory', async () => {
    const text = await shell(
      `df -k /tmp "$HOME" | tail -n +2; python3 -c "open('/tmp/fill', 'wb').write(b'x' * (40 * 1024**2))"; echo rc=$?`,
    );
    expect(text).toContain('No space left on device');
    expect(text).toContain('limit: a write may have failed for want of space: /tmp and HOME hold 16 MB each');
    expect(text).toContain('rc=1');
    const sizes = [...text.matchAll(/^tmpfs\s+(\d+)/gmu)].map((match) => Number(match[1]));
    expect(sizes).toEqual([16 * 1024, 16 * 1024]);
  });

  it('leaves no other RAM-backed place to fill: /dev/shm is bounded, the sandbox root and /dev read-only', async () => {
    const text = await shell(
      `df -k /dev/shm | tail -n +2; python3 -c "open('/dev/shm/fill', 'wb').write(b'x' * (40 * 1024**2))"; echo rc=$?; ` +
        'echo x > /planted; echo x > /dev/planted; echo done',
    );
    expect(text).toMatch(/^tmpfs\s+16384\s/mu);
    expect(text).toContain('No space left on device');
    expect(text).toContain('rc=1');
    expect(text).toContain('/planted: Read-only file system');
    expect(text).toContain('/dev/planted: Read-only file system');
  });

  it('runs an ordinary command unaffected under the defaults, and tells the model the limits', async () => {
    const text = await shell('python3 -c "print(sum(range(10**6)))"', { allow: ['sh', 'python3'] });
    expect(text).toContain('exit code: 0');
    expect(text).toContain('499999500000');
    expect(text).not.toContain('limit:');
  });

  it('refuses a limit that is not a positive integer, naming its setting', async () => {
    const { createRunCommandTool } = await import('../../../src/tools/builtin/run-command.js');
    expect(() => createRunCommandTool({ allow: ['sh'], limits: { memoryMb: 0 } }, workspace)).toThrow(
      /limits.memoryMb \(KEEL_RUN_COMMAND_MEMORY_MB\) must be a positive integer/u,
    );
    expect(DEFAULT_LIMITS.memoryMb).toBeGreaterThan(0);
  });
});
