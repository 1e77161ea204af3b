import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { access, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { processIdentity } from '../../src/cli/process-identity.js';
import type { ServerRecord } from '../../src/cli/server-record.js';
import { LocalServers } from '../support/local-servers.js';
import { dynamicConfigArguments } from '../../src/server-settings.js';

const servers = new LocalServers();
const bystanders: ChildProcess[] = [];
afterEach(async () => {
  await servers.stopAll();
  await Promise.all(
    bystanders.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
});

/** A process that is not a Temporal server, to stand where a recorded PID was reused. */
async function bystander(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  bystanders.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
}

/** A server.json naming `pid`, as if Keel had started a server there. */
async function fakeRecord(
  dataDirectory: string,
  pid: number,
  processStartTime: string,
  args = ['server', 'start-dev', '--db-filename', path.join(dataDirectory, 'temporal.db')],
): Promise<void> {
  const record: ServerRecord = {
    pid,
    address: '127.0.0.1:1',
    port: 1,
    uiPort: 2,
    uiUrl: 'http://localhost:2',
    binary: '/usr/bin/temporal',
    dataFile: path.join(dataDirectory, 'temporal.db'),
    logFile: path.join(dataDirectory, 'server.log'),
    startedAt: new Date().toISOString(),
    processStartTime,
    args,
  };
  await mkdir(dataDirectory, { recursive: true });
  await writeFile(path.join(dataDirectory, 'server.json'), JSON.stringify(record));
}

const alive = async (pid: number) => (await processIdentity(pid)) !== undefined;

describe('keel server start|status|stop', () => {
  it('starts the server once, reports it, stops it by its PID, and then says it is not running', async () => {
    const { env, dataDirectory, port, uiPort } = await servers.setup();
    const before = await servers.runCli(['server', 'status'], { env });
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('is not running');

    const started = await servers.runCli(['server', 'start'], { env });
    expect(started.code).toBe(0);
    const record = (await LocalServers.record(dataDirectory))!;
    expect(record).toMatchObject({
      address: `127.0.0.1:${port}`,
      uiPort,
      uiUrl: `http://localhost:${uiPort}`,
    });
    expect(started.stdout).toContain(`PID      ${record.pid}`);
    // With Keel's dynamic config (src/server-settings.ts), as the process itself was given it.
    const commandLine = (await readFile(`/proc/${record.pid}/cmdline`, 'utf8')).split('\0');
    const settings = dynamicConfigArguments();
    expect(settings).toContain('history.transferProcessorMaxPollRPS=1000');
    for (let index = 0; index < settings.length; index += 2)
      expect(commandLine.join(' ')).toContain(`${settings[index]} ${settings[index + 1]}`);
    expect(started.stdout).toContain(`Web UI   http://localhost:${uiPort}`);
    await access(path.join(dataDirectory, 'server.log'));
    // Owner only: the directory holds every task and tool output (temporal.db).
    expect((await stat(dataDirectory)).mode & 0o777).toBe(0o700);
    for (const file of ['server.log', 'server.json'])
      expect((await stat(path.join(dataDirectory, file))).mode & 0o777).toBe(0o600);

    const again = await servers.runCli(['server', 'start', '--json'], { env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already running');
    expect(JSON.parse(again.stdout)).toMatchObject({ running: true, pid: record.pid });

    const status = await servers.runCli(['server', 'status', '--json'], { env });
    expect(status.code).toBe(0);
    const reported = JSON.parse(status.stdout) as { uptimeSeconds: unknown };
    expect(reported).toMatchObject({
      running: true,
      pid: record.pid,
      address: `127.0.0.1:${port}`,
      dataFile: path.join(dataDirectory, 'temporal.db'),
    });
    expect(typeof reported.uptimeSeconds).toBe('number');

    const stopped = await servers.runCli(['server', 'stop'], { env });
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain(`Stopped Keel's local Temporal server (PID ${record.pid})`);
    expect(await alive(record.pid)).toBe(false);
    expect(await LocalServers.record(dataDirectory)).toBeUndefined();
    const after = await servers.runCli(['server', 'status', '--json'], { env });
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout)).toMatchObject({ running: false });
  }, 120_000);

  it('keeps a server whose start was interrupted by Ctrl-C as Keel’s: status names it, stop ends it', async () => {
    const { env, dataDirectory } = await servers.setup();
    const starting = servers.startCli(['server', 'start'], { env });
    await starting.waitForOutput('Starting a local Temporal server');
    // Ctrl-C once the server process exists, long before a first start (a new database) answers.
    let server: number | undefined;
    while (server === undefined && starting.child.exitCode === null)
      [server] = await LocalServers.serverProcesses(dataDirectory);
    starting.child.kill('SIGINT');
    await starting.exited;
    expect(starting.stdout).not.toContain("Keel's local Temporal server is running");

    expect(server).toBeDefined();
    const log = () => readFile(path.join(dataDirectory, 'server.log'), 'utf8').catch(() => '(no log)');
    expect(await alive(server!), await log()).toBe(true);
    const record = await LocalServers.record(dataDirectory);
    expect(record?.pid).toBe(server);
    const status = await servers.runCli(['server', 'status'], { env });
    expect(status.stdout, await log()).toMatch(/Keel's local Temporal server (is running|is starting)/u);
    expect(status.stdout).toContain(`PID      ${server}`);
    expect(status.stdout).not.toContain('Keel did not start');

    const stopped = await servers.runCli(['server', 'stop'], { env });
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain(`Stopped Keel's local Temporal server (PID ${server})`);
    expect(await alive(server!)).toBe(false);
  }, 120_000);

  it('starts one server when two commands start it for the same data directory at once', async () => {
    const { env, dataDirectory } = await servers.setup();
    const [first, second] = await Promise.all([
      servers.runCli(['server', 'start', '--json'], { env }),
      servers.runCli(['server', 'start', '--json'], { env }),
    ]);
    expect([first.code, second.code], first.stderr + second.stderr).toEqual([0, 0]);
    const record = await LocalServers.record(dataDirectory);
    const pids = [first, second].map((result) => (JSON.parse(result.stdout) as { pid: number }).pid);
    expect(pids).toEqual([record!.pid, record!.pid]);
    expect(first.stderr + second.stderr).toContain('already running');
  }, 120_000);

  it('recognises a record whose process has ended and signals nothing', async () => {
    const { env, dataDirectory } = await servers.setup();
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    const pid = await new Promise<number>((resolve) => gone.once('exit', () => resolve(gone.pid!)));
    await fakeRecord(dataDirectory, pid, '12345');
    const status = await servers.runCli(['server', 'status'], { env });
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`its process ${pid} has ended`);
    expect(await LocalServers.record(dataDirectory)).toBeUndefined();
  });

  const startOf = async (pid: number) => (await processIdentity(pid))!.startTime;
  it.each([
    ['another start time', async (pid: number) => `${await startOf(pid)}1`, undefined],
    ['its own start time but another command line', startOf, undefined],
    // A record rewritten to name any process by its start time and a piece of its command line.
    ['its own start time and a piece of its command line as the arguments', startOf, ['-e']],
  ])(
    'never signals a recorded PID that now belongs to another process (%s)',
    async (_case, startTime, args) => {
      const { env, dataDirectory } = await servers.setup();
      const other = await bystander();
      await fakeRecord(dataDirectory, other.pid!, await startTime(other.pid!), args);
      const stopped = await servers.runCli(['server', 'stop'], { env });
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toContain(`PID ${other.pid} now belongs to another process`);
      expect(stopped.stdout).toContain('signalled nothing');
      expect(await alive(other.pid!)).toBe(true);
      expect(other.exitCode).toBeNull();
      expect(await LocalServers.record(dataDirectory)).toBeUndefined();

      // status, too, recognises it without touching the process.
      await fakeRecord(dataDirectory, other.pid!, await startTime(other.pid!), args);
      const status = await servers.runCli(['server', 'status'], { env });
      expect(status.code).toBe(1);
      expect(await alive(other.pid!)).toBe(true);
    },
  );

  it('leaves a server Keel did not start alone: start refuses, stop and status say it is not Keel’s', async () => {
    const foreignPort = inject('temporalAddress').split(':')[1]!;
    const { env } = await servers.setup({ KEEL_LOCAL_PORT: foreignPort });
    const started = await servers.runCli(['server', 'start'], { env });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`Keel did not start already answers on 127.0.0.1:${foreignPort}`);
    const status = await servers.runCli(['server', 'status'], { env });
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(
      `A Temporal server that Keel did not start answers on 127.0.0.1:${foreignPort}`,
    );
    const stopped = await servers.runCli(['server', 'stop'], { env });
    expect(stopped.stdout).toContain('is not running');
    // The shared test server still answers: this very command reaches it.
    const list = await servers.runCli(['list', '--json'], { env });
    expect(list.code).toBe(0);
  });

  it.each([[[]], [['restart']], [['status', 'extra']]])(
    'refuses keel server %j with exit code 2',
    async (args) => {
      const { env } = await servers.setup();
      const { code, stderr } = await servers.runCli(['server', ...args], { env });
      expect(code).toBe(2);
      expect(stderr).toContain('See: keel server --help');
    },
  );
});
