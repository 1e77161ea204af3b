import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { keelSearchAttributes } from '../workflows/search-attributes.js';
import { processIdentity } from './process-identity.js';
import type { ServerRecord } from './server-record.js';
import { removeServerRecord, writeServerRecord } from './server-record.js';
import { dynamicConfigArguments } from '../server-settings.js';
import { withSignalsDeferred } from './defer-signals.js';

/** How long a starting server may take to answer (a first start creates its database). */
const START_TIMEOUT_MS = 60_000;
/** How long a server may take to exit after SIGTERM before it gets SIGKILL. */
const STOP_TIMEOUT_MS = 15_000;
/** The data directory holds every task and tool output (temporal.db): its owner's only. */
export const PRIVATE_DIRECTORY = 0o700;
/** How often to look again while waiting for a server to answer or to exit. */
const POLL_MS = 100;

/** Whether something accepts TCP connections on `address` (host:port), within `timeoutMs`. */
async function listening(address: string, timeoutMs: number): Promise<boolean> {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/gu, '');
  const port = Number(address.slice(separator + 1));
  return await new Promise<boolean>((resolve) => {
    const socket = createConnection({ host, port, timeout: timeoutMs });
    const done = (result: boolean): void => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/**
 * Whether a Temporal server answers on `address`. A closed port says no at once; a port that
 * accepts gets up to 5 s to answer gRPC, so a server on a loaded machine is not taken for none
 * (one second was too short for a shared test server under two CI runs).
 */
export async function answers(address: string): Promise<boolean> {
  if (!(await listening(address, 2_000))) return false;
  try {
    const connection = await Connection.connect({ address, connectTimeout: '5s' });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

/** Whether `address` answers within `timeoutMs`, probing every {@link POLL_MS}. */
export async function answersWithin(address: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await answers(address)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * The variables the server process gets: what a binary (or a pyenv-style launcher) needs to run,
 * and nothing else, so API keys in the CLI's environment never reach a process that outlives it.
 */
function serverEnvironment(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = /^(PATH|HOME|USER|LOGNAME|TMPDIR|TMP|TEMP|LANG|TZ|LC_\w+|PYENV_\w+|SYSTEMROOT)$/iu;
  return Object.fromEntries(Object.entries(environment).filter(([name]) => kept.test(name)));
}

/** The last lines of a log file, for an error message. */
export async function logTail(file: string, lines = 15): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Runs `work` while holding `<dataDirectory>/server.lock`, so two commands starting the server for
 * one data directory at the same moment do not start two (the second one's would find the database
 * locked and exit). A command that finds the lock held waits until its holder is done; a lock
 * whose holder has ended is taken over.
 */
export async function withStartLock<T>(dataDirectory: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dataDirectory, { recursive: true, mode: PRIVATE_DIRECTORY });
  const lock = path.join(dataDirectory, 'server.lock');
  const deadline = Date.now() + START_TIMEOUT_MS + STOP_TIMEOUT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      try {
        await handle.write(String(process.pid));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(await readFile(lock, 'utf8').catch(() => ''));
    if (holder > 0 && (await processIdentity(holder)) === undefined) {
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`${lock} is held by process ${holder}, which has been starting a server for too long.`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/**
 * Starts `temporal server start-dev` in its own session and process group (so a terminal's Ctrl-C
 * or hang-up never reaches it), its output appended to `<dataDirectory>/server.log`, and lets it
 * outlive this process. Records it in `server.json` (marked starting) as soon as it runs, and
 * resolves once it answers on its port while the process started here still runs (same start
 * time), with the record marked started. Rejects with the end of its log (and removes the record)
 * when it exits or does not answer in time. A start that exits because a port the server picked for
 * itself was taken meanwhile is made again, up to 3 times in all.
 */
export async function startLocalServer(options: LocalServerOptions): Promise<ServerRecord> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (!(error instanceof LostPortRace) || attempt >= PORT_RACE_ATTEMPTS) throw error;
    }
  }
}

interface LocalServerOptions {
  dataDirectory: string;
  binary: string;
  port: number;
  uiPort: number;
  environment: NodeJS.ProcessEnv;
}

/** How many times a start that lost one of the server's own ports to another process is tried. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * The server exited because a port it picked for itself was taken before it bound it. The dev
 * server picks its internal ports (membership, HTTP, metrics) by asking the kernel for a free one
 * and binding it later, so another process can take one in between: a new start picks new ones.
 */
class LostPortRace extends Error {}

/**
 * The port this start of the server could not bind, from its log since `marker`, when it is not one
 * of the two Keel chose (a taken `port` or `uiPort` stays taken: trying again would not help).
 */
async function lostPort(logFile: string, marker: string, chosen: number[]): Promise<number | undefined> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const since = text.slice(Math.max(0, text.lastIndexOf(marker)));
  const port = Number(/:(\d+): bind: address already in use/u.exec(since)?.[1]);
  return Number.isInteger(port) && port > 0 && !chosen.includes(port) ? port : undefined;
}

async function startOnce(options: LocalServerOptions): Promise<ServerRecord> {
  const { dataDirectory, binary, port, uiPort } = options;
  await mkdir(dataDirectory, { recursive: true, mode: PRIVATE_DIRECTORY });
  const dataFile = path.join(dataDirectory, 'temporal.db');
  const logFile = path.join(dataDirectory, 'server.log');
  const address = `127.0.0.1:${port}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    dataFile,
    '--log-level',
    'warn',
    ...dynamicConfigArguments(),
    ...keelSearchAttributes.flatMap((key) => [
      '--search-attribute',
      `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`,
    ]),
  ];
  const marker = `--- keel: ${new Date().toISOString()} ${binary} ${args.join(' ')}\n`;
  let ended: string | undefined;
  const failed = async (what: string): Promise<Error> => {
    await removeServerRecord(dataDirectory);
    const message = `The local Temporal server (${binary}) ${what} before it answered on ${address}. The end of its log (${logFile}):\n${await logTail(logFile)}`;
    const lost = ended === undefined ? undefined : await lostPort(logFile, marker, [port, uiPort]);
    return lost === undefined ? new Error(message) : new LostPortRace(message);
  };
  // From the spawn until the record is written, Ctrl-C waits: a command interrupted in between
  // would leave a server running that no record names as Keel's.
  const { child, record } = await withSignalsDeferred(async () => {
    const log = await open(logFile, 'a', 0o600);
    let child: ReturnType<typeof spawn>;
    let spawned: Promise<void>;
    try {
      await log.write(marker);
      child = spawn(binary, args, {
        detached: true,
        stdio: ['ignore', log.fd, log.fd],
        env: serverEnvironment(options.environment),
        cwd: dataDirectory,
      });
      // 'spawn' comes once the binary runs (its exec succeeded), 'error' when it could not: listened
      // for at once, since either may come while the log closes.
      spawned = new Promise<void>((resolve) => {
        child.once('spawn', () => resolve());
        child.once('error', () => resolve());
      });
    } finally {
      await log.close();
    }
    child.unref();
    child.once('error', (error) => (ended = `could not start: ${error.message}`));
    child.once('exit', (code, signal) => (ended = `exited (${signal ?? `code ${code}`})`));
    await spawned;
    const identity = child.pid === undefined ? undefined : await processIdentity(child.pid);
    if (ended !== undefined || identity === undefined) throw await failed(ended ?? 'exited');
    // Recorded before it answers: a command interrupted from here on leaves a server known as Keel's.
    const record: ServerRecord = {
      pid: child.pid!,
      address,
      port,
      uiPort,
      uiUrl: `http://localhost:${uiPort}`,
      binary,
      dataFile,
      logFile,
      startedAt: new Date().toISOString(),
      processStartTime: identity.startTime,
      args,
      starting: true,
    };
    await writeServerRecord(dataDirectory, record);
    return { child, record };
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (ended !== undefined) throw await failed(ended);
    // Another server may have held the port all along: the answer counts only while ours still runs.
    if ((await answers(address)) && ended === undefined && (await sameProcess(record)))
      return completeRecord(dataDirectory, record);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw await failed(`did not answer within ${START_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Whether the recorded PID still has the recorded start time. */
async function sameProcess(record: ServerRecord): Promise<boolean> {
  return (await processIdentity(record.pid))?.startTime === record.processStartTime;
}

/** Rewrites a starting record as a started one (the server answers). */
async function completeRecord(dataDirectory: string, record: ServerRecord): Promise<ServerRecord> {
  const started: ServerRecord = { ...record };
  delete started.starting;
  await writeServerRecord(dataDirectory, started);
  return started;
}

/**
 * Waits for a recorded server that is still starting (its starter may have been interrupted) to
 * answer, up to the start timeout; then marks its record started. Resolves undefined when it ended or
 * did not answer in time.
 */
export async function awaitStartingServer(
  dataDirectory: string,
  record: ServerRecord,
): Promise<ServerRecord | undefined> {
  const deadline = Date.parse(record.startedAt) + START_TIMEOUT_MS;
  for (;;) {
    if (!(await sameProcess(record))) return undefined;
    if (await answers(record.address)) return completeRecord(dataDirectory, record);
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Stops the recorded server: SIGTERM to its PID alone (the caller verified it, see `recordedServer`),
 * then SIGKILL if it has not exited within 15 s; removes `server.json` once it is gone. Each signal
 * goes only to a process that still has the recorded start time.
 */
export async function stopLocalServer(
  dataDirectory: string,
  record: ServerRecord,
): Promise<'stopped' | 'killed'> {
  const same = (): Promise<boolean> => sameProcess(record);
  const gone = async (timeoutMs: number): Promise<boolean> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() <= deadline) {
      if (!(await same())) return true;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return false;
  };
  let how: 'stopped' | 'killed' = 'stopped';
  if (await same()) {
    process.kill(record.pid, 'SIGTERM');
    if (!(await gone(STOP_TIMEOUT_MS))) {
      how = 'killed';
      if (await same()) process.kill(record.pid, 'SIGKILL');
      if (!(await gone(5_000)))
        throw new Error(`The local Temporal server (PID ${record.pid}) did not exit after SIGKILL.`);
    }
  }
  await removeServerRecord(dataDirectory);
  return how;
}
