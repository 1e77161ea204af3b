import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { processIdentity } from '../../src/cli/process-identity.js';
import { ServerRecord } from '../../src/cli/server-record.js';
import { cliEnvironment } from './cli.js';
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

  /** A fresh data directory and free ports. */
  async setup(extra: Record<string, string> = {}): Promise<LocalServerSetup> {
    const dataDirectory = await mkdtemp(path.join(tmpdir(), 'keel-data-'));
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

  /** Ends every recorded server these setups started (SIGTERM, then SIGKILL after 20 s). */
  async stopAll(): Promise<void> {
    await Promise.all(this.#directories.splice(0).map((directory) => stopRecorded(directory)));
  }
}

async function stopRecorded(dataDirectory: string): Promise<void> {
  const record = await LocalServers.record(dataDirectory);
  if (record === undefined) return;
  const ours = async () => (await processIdentity(record.pid))?.startTime === record.processStartTime;
  for (const [signal, timeoutMs] of [
    ['SIGTERM', 20_000],
    ['SIGKILL', 5_000],
  ] as const) {
    if (!(await ours())) return;
    process.kill(record.pid, signal);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!(await ours())) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
