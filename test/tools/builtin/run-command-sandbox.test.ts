import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import type { RunCommandOptions } from '../../../src/tools/builtin/run-command.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { outcome, runCommandCall } from '../../support/run-command-call.js';
import { sleepMarker } from '../../support/run-command-processes.js';

/**
 * Attacks on the sandbox itself, each by a command a hostile model could send with only harmless
 * programs allowed. Layout: <base>/ws is the workspace, <base>/outside a directory beside it.
 */
let base: string;
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-sandbox-')));
  root = path.join(base, 'ws');
  await mkdir(root);
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'outside-secret');
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const SECRET = 'sk-keel-sandbox-attack-4f1b9c2d7e';
const runner = fileURLToPath(new URL('../../support/process/run-command-main.ts', import.meta.url));

/** Runs one call in a worker-like child process whose own environment holds SECRET, as a worker's would. */
async function runInWorkerProcess(
  args: Record<string, unknown>,
  options: RunCommandOptions,
  inherited: Record<number, number> = {},
): Promise<Observation> {
  // Descriptors the worker inherits without close-on-exec, as from a careless supervisor.
  const extra = Array.from({ length: 101 }, (_, fd) => inherited[fd] ?? 'ignore').slice(3);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', runner, JSON.stringify({ workspace: root, options, args })],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OPENAI_API_KEY: SECRET },
      stdio: ['ignore', 'pipe', 'inherit', ...extra],
    },
  );
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code).toBe(0);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Observation;
}

function text(observation: Observation): string {
  expect(observation).toMatchObject({ ok: true });
  return outcome(observation).text;
}

describe('run_command sandbox', () => {
  it("never shows the worker's environment, whichever program reads /proc", async () => {
    const options = { allow: ['cat', 'grep', 'od', 'sh'] };
    const attacks = [
      { program: 'cat', args: ['/proc/$WORKER_PID/environ'] },
      { program: 'grep', args: ['-a', 'OPENAI_API_KEY', '/proc/$WORKER_PID/environ'] },
      { program: 'od', args: ['-An', '-c', '-w1000000', '/proc/$WORKER_PID/environ'] },
      // Every process the sandbox can see, bubblewrap's own init included.
      {
        program: 'sh',
        args: ['-c', 'for f in /proc/[0-9]*/environ; do echo "$f"; tr "\\0" "\\n" < "$f"; done'],
      },
    ];
    const outputs = await Promise.all(attacks.map((attack) => runInWorkerProcess(attack, options)));
    for (const [index, observation] of outputs.entries()) {
      const output = text(observation);
      expect(output.replace(/\s+/g, ''), JSON.stringify(attacks[index])).not.toContain(SECRET);
      expect(output).not.toContain('OPENAI_API_KEY');
    }
    // The first three ran and found no such process: the worker is not in the sandbox's /proc.
    for (const observation of outputs.slice(0, 3))
      expect(text(observation)).toContain('No such file or directory');
    // The last one did read environments: those of the sandbox's own processes, and nothing more.
    expect(text(outputs[3]!)).toMatch(/\/proc\/1\/environ\n[\s\S]*\nPATH=/);
  });

  it('runs in namespaces of its own: user, pid, mount, ipc, uts, cgroup and network', async () => {
    const kinds = ['user', 'pid', 'mnt', 'ipc', 'uts', 'cgroup', 'net'];
    const script = `for kind in ${kinds.join(' ')}; do readlink /proc/self/ns/$kind; done`;
    const output = text(
      await runCommandCall(workspace, { program: 'sh', args: ['-c', script] }, { allow: ['sh'] }),
    );
    const inside = /stdout:\n([\s\S]*)\nstderr/.exec(output)![1]!.split('\n');
    expect(inside).toHaveLength(kinds.length);
    for (const [index, kind] of kinds.entries()) {
      expect(inside[index]).toMatch(new RegExp(`^${kind}:\\[\\d+\\]$`));
      expect(inside[index], kind).not.toBe(readlinkSync(`/proc/self/ns/${kind}`));
    }
  });

  it("keeps none of the worker's descriptors, which would lead out of the sandbox", async () => {
    await mkdir(path.join(root, 'sub'));
    // bubblewrap gets the held cwd and two pipes as descriptors 3 to 5; the held cwd is a directory of
    // the host's mounts, so `/proc/self/fd/5/../..` would list the directory beside the workspace.
    const script =
      'for fd in 3 4 5 6 7 8 9; do ls -a /proc/self/fd/$fd/../.. 2>&1; done; ' +
      'for f in /proc/self/fd/*; do case ${f##*/} in 0|1|2) continue;; esac; ' +
      '[ -d "$f" ] || [ -f "$f" ] || [ -S "$f" ] && echo "open: $f"; done';
    const output = text(
      await runCommandCall(workspace, { program: 'sh', args: ['-c', script], cwd: 'sub' }, { allow: ['sh'] }),
    );
    expect(output).not.toContain('outside');
    for (const fd of [3, 4, 5, 6, 7, 8, 9]) {
      expect(output).toContain(`ls: cannot access '/proc/self/fd/${fd}/../..': No such file or directory`);
    }
    expect(output).not.toContain('open:');
  });

  it('refuses to run while the worker holds an inherited descriptor of the host that it cannot close', async () => {
    const directory = await open(path.join(base, 'outside'), 'r');
    try {
      // A supervisor that leaves a directory open without close-on-exec, at a number no shell closes.
      const look = { program: 'sh', args: ['-c', 'ls /proc/self/fd/100/ 2>&1; echo ran'] };
      const observation = await runInWorkerProcess(look, { allow: ['sh'] }, { 100: directory.fd });
      expect(outcome(observation)).toEqual({
        ok: false,
        text: expect.stringMatching(
          /the worker holds descriptor 100, inherited from what started it/,
        ) as string,
      });
    } finally {
      await directory.close();
    }
  });

  it("cannot see or signal the worker's processes", async () => {
    const observation = await runCommandCall(
      workspace,
      {
        program: 'sh',
        args: ['-c', `kill -0 ${process.pid} && echo signalled; ls /proc | grep -c '^[0-9]'`],
      },
      { allow: ['sh'] },
    );
    const output = text(observation);
    expect(output).not.toContain('signalled');
    // Only the sandbox's own: its init, the shell, ls and grep.
    expect(Number(/stdout:\n(\d+)/.exec(output)![1])).toBeLessThanOrEqual(4);
  });

  it('writes only to the workspace, as the worker user; system directories are read-only, /tmp and HOME private', async () => {
    const marker = sleepMarker();
    const outside = path.join(base, 'outside');
    const [etc, usr, tmp, home, beside, parent] = ['/etc', '/usr', '/tmp', '/home/keel', outside, base].map(
      (directory) => `${directory}/keel-${marker}`,
    );
    const script =
      `ls -A "$HOME"; for f in ${[etc, usr, tmp, home, beside, parent].join(' ')}; do ` +
      `echo x 2>/dev/null > "$f" && echo "wrote $f"; done; cat ${outside}/secret.txt; echo inside > made.txt`;
    const output = text(
      await runCommandCall(workspace, { program: 'sh', args: ['-c', script] }, { allow: ['sh'] }),
    );
    // HOME starts empty; /tmp and HOME are writable; the directory beside the workspace is not there at all.
    expect(output).toMatch(
      new RegExp(`^exit code: 0\nstdout:\nwrote ${tmp}\nwrote ${home}\nwrote ${parent}\nstderr:\n`),
    );
    expect(output).toContain(`cat: ${outside}/secret.txt: No such file or directory`);
    expect(output).not.toContain('outside-secret');
    // What was written outside the workspace stayed in the sandbox's private directories.
    for (const target of [etc, usr, tmp, home, beside, parent])
      expect(existsSync(target!), target).toBe(false);
    expect(readFileSync(path.join(root, 'made.txt'), 'utf8')).toBe('inside\n');
    expect(statSync(path.join(root, 'made.txt')).uid).toBe(process.getuid!());
  });

  describe('network', () => {
    let server: Server;
    let connections: Socket[];
    let port: number;

    beforeEach(async () => {
      connections = [];
      server = createServer((socket) => (connections.push(socket), socket.destroy()));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterEach(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const connect = (): Record<string, unknown> => ({
      program: 'bash',
      args: ['-c', `echo hello > /dev/tcp/127.0.0.1/${port} && echo connected`],
    });

    it("has none: not even the worker's loopback is reachable", async () => {
      const output = text(await runCommandCall(workspace, connect(), { allow: ['bash'] }));
      expect(output).toContain('Connection refused');
      expect(output).not.toContain('connected');
      expect(connections).toHaveLength(0);
    });

    it('shares the worker network when the operator says so', async () => {
      const output = text(await runCommandCall(workspace, connect(), { allow: ['bash'], network: true }));
      expect(output).toContain('stdout:\nconnected');
      expect(connections).toHaveLength(1);
    });
  });

  it('refuses a program outside the directories the sandbox shows, unless an operator adds them', async () => {
    const tool = path.join(base, 'outside', 'tool.sh');
    await writeFile(tool, '#!/bin/sh\necho tool ran\n');
    await chmod(tool, 0o755);
    const refused = outcome(await runCommandCall(workspace, { program: tool }, { allow: [tool] }));
    expect(refused).toEqual({
      ok: false,
      // The system directories this host has, /usr and /etc at least.
      text: expect.stringMatching(
        /^\S+ is allowed but \S+ lies outside the directories the sandbox shows \(\/usr, .*\/etc\); an operator can add its directory to KEEL_RUN_COMMAND_READ_ONLY_PATHS$/,
      ) as string,
    });
    const allowed = { allow: [tool], readOnlyPaths: [path.join(base, 'outside')] };
    expect(text(await runCommandCall(workspace, { program: tool }, allowed))).toContain('stdout:\ntool ran');
  });

  it('refuses to run a command when the sandbox cannot start, and says why', async () => {
    const fake = path.join(base, 'outside', 'bwrap');
    await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    await chmod(fake, 0o755);
    const marker = path.join(root, 'ran');
    const observation = await runCommandCall(
      workspace,
      { program: 'sh', args: ['-c', `touch ${marker}`] },
      { allow: ['sh'], bwrapPath: fake },
    );
    expect(outcome(observation)).toEqual({
      ok: false,
      text: expect.stringMatching(
        /^The sandbox for \/.*sh did not start: bwrap: No permissions to create new namespace$/,
      ) as string,
    });
    expect(existsSync(marker)).toBe(false);
  });
});
