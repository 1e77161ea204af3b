import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { processIdentity } from '../../src/cli/process-identity.js';
import { ServerRecord } from '../../src/cli/server-record.js';
import { cliEnvironment, startCli } from './cli.js';
import type { CliOptions } from './cli.js';
import type { CliProcess } from './cli.js';
import { freePort } from './free-port.js';

/** A place for the CLI's own local server: a data directory and free ports, none shared with other tests. */
export interface LocalServerSetup {
  dataDirectory: string;
  port: number;
  uiPort: number;
  /** The CLI's environment: PATH and HOME, KEEL_DATA_DIR and the ports, plus `extra`. */
  env: NodeJS.ProcessEnv;
}

/**
 * The local servers a test file's CLI processes may start (they outlive the CLI by design). Each
 * setup's data directory is remembered, and {@link stopAll} ends the server recorded there, by its
 * PID and only while that PID still has the recorded start time, so nobody else's process is hit.
 */
export class LocalServers {
  readonly #directories: string[] = [];
  readonly #clis: CliProcess[] = [];

  /** `startCli`, remembered: {@link stopAll} kills it first if it still runs (a test that failed or timed out). */
  startCli(args: string[], options: CliOptions): CliProcess {
    const cli = startCli(args, options);
    this.#clis.push(cli);
    return cli;
  }

  /** `runCli` through {@link startCli}, so a CLI still running when its test ends is killed. */
  async runCli(
    args: string[],
    options: CliOptions,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const cli = this.startCli(args, options);
    const code = await cli.exited;
    return { code, stdout: cli.stdout, stderr: cli.stderr };
  }

  /** A fresh data directory and free ports. */
  async setup(extra: Record<string, string> = {}): Promise<LocalServerSetup> {
    // Keel creates the data directory itself (with its mode), inside a private temporary one.
    const dataDirectory = path.join(await mkdtemp(path.join(tmpdir(), 'keel-data-')), 'data');
    this.#directories.push(dataDirectory);
    const [port, uiPort] = [await freePort(), await freePort()];
    const env = cliEnvironment({
      KEEL_DATA_DIR: dataDirectory,
      KEEL_LOCAL_PORT: String(port),
      KEEL_LOCAL_UI_PORT: String(uiPort),
      ...extra,
    });
    return { dataDirectory, port, uiPort, env };
  }

  /** The record in a setup's data directory, if any. */
  static async record(dataDirectory: string): Promise<ServerRecord | undefined> {
    try {
      return ServerRecord.parse(JSON.parse(await readFile(path.join(dataDirectory, 'server.json'), 'utf8')));
    } catch {
      return undefined;
    }
  }

  /**
   * PIDs of the `temporal server start-dev` processes on a setup's database, found by their command
   * lines in /proc (Linux): what a server looks like even before, or without, a `server.json`.
   */
  static async serverProcesses(dataDirectory: string): Promise<number[]> {
    const database = path.join(dataDirectory, 'temporal.db');
    const pids = (await readdir('/proc')).filter((name) => /^\d+$/u.test(name)).map(Number);
    const found: number[] = [];
    for (const pid of pids) {
      const commandLine = (await processIdentity(pid))?.commandLine;
      if (commandLine === undefined) continue;
      const at = commandLine.indexOf('--db-filename');
      if (commandLine.join(' ').includes(' server start-dev ') && at >= 0 && commandLine[at + 1] === database)
        found.push(pid);
    }
    return found;
  }

  /**
   * Kills the CLIs started through {@link startCli} that still run, then ends every server these
   * setups started (SIGTERM, then SIGKILL after 20 s): the one `server.json`
   * names, and any other `temporal server start-dev` on a setup's own database (a start that was
   * interrupted, or a test that timed out, before the record was written); then removes the
   * setups' data directories.
   */
  async stopAll(): Promise<void> {
    // The CLIs first: one still starting a server would otherwise start it after the sweep.
    await Promise.all(
      this.#clis.splice(0).map(async (cli) => {
        if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
        await cli.exited;
      }),
    );
    await Promise.all(
      this.#directories.splice(0).map(async (directory) => {
        await stopRecorded(directory);
        await Promise.all(
          (await LocalServers.serverProcesses(directory)).map(async (pid) => {
            const startTime = (await processIdentity(pid))?.startTime;
            if (startTime !== undefined) await stopProcess(pid, startTime);
          }),
        );
        await rm(path.dirname(directory), { recursive: true, force: true });
      }),
    );
  }
}

async function stopRecorded(dataDirectory: string): Promise<void> {
  const record = await LocalServers.record(dataDirectory);
  if (record === undefined) return;
  await stopProcess(record.pid, record.processStartTime);
}

/** SIGTERM, then SIGKILL, to `pid` only while it still has `startTime` (a reused PID is left alone). */
async function stopProcess(pid: number, startTime: string): Promise<void> {
  const ours = async () => (await processIdentity(pid))?.startTime === startTime;
  for (const [signal, timeoutMs] of [
    ['SIGTERM', 20_000],
    ['SIGKILL', 5_000],
  ] as const) {
    if (!(await ours())) return;
    process.kill(pid, signal);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!(await ours())) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
