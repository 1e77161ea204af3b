import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';
import { until } from './until.js';

const run = promisify(execFile);

/** A private PostgreSQL server for one test file: its own data directory, on a loopback port. */
export interface Postgres {
  host: '127.0.0.1';
  port: number;
  user: string;
  password: string;
  /** The data directory, as the server reports it (`current_setting('data_directory')`). */
  dataDirectory: string;
  /** postgres://user:password@127.0.0.1:port/database */
  url(database?: string): string;
  /** The postmaster's PID (from postmaster.pid). */
  pid(): Promise<number>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  /** Starts the server again on the same port and data (after {@link stop} or {@link kill}). */
  start(): Promise<void>;
  /** SIGKILLs the postmaster and its backends (a crash of the database machine), and waits until they are gone. */
  kill(): Promise<void>;
  /** Stops the server if it runs and removes its data directory. */
  close(): Promise<void>;
}

/** The directory holding `initdb`, `pg_ctl` and `postgres`: Debian's newest, else `pg_config`'s, else PATH's. */
async function binaryDirectory(): Promise<string> {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = (await readdir(debian))
      .filter((name) => /^\d+$/u.test(name) && existsSync(path.join(debian, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return path.join(debian, versions[0], 'bin');
  }
  try {
    const { stdout } = await run('pg_config', ['--bindir']);
    const directory = stdout.trim();
    if (existsSync(path.join(directory, 'initdb'))) return directory;
  } catch {
    // No pg_config: look on PATH.
  }
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory !== '' && existsSync(path.join(directory, 'initdb'))) return directory;
  }
  throw new Error(
    'PostgreSQL is not installed: no initdb in /usr/lib/postgresql/<version>/bin, `pg_config --bindir` or PATH ' +
      '(on Debian: apt-get install postgresql).',
  );
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` system user. */
async function systemUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    throw new Error('running as root, and there is no `postgres` system user to run PostgreSQL as');
  }
}

/** The process group of `pid`, zombies included, or undefined once it is gone (read from /proc, Linux). */
async function processGroup(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields that follow start after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** Processes in process group `group`, zombies included. */
async function groupMembers(group: number): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/u.test(name)).map(Number);
  const members: number[] = [];
  for (const pid of pids) if ((await processGroup(pid)) === group) members.push(pid);
  return members;
}

/**
 * Starts a PostgreSQL server of its own: `initdb` (scram-sha-256, user `temporal`/`temporal` unless
 * given, UTF8) in a fresh temporary directory, listening on 127.0.0.1 only on a free port, its unix
 * socket in that directory, started with `pg_ctl`. Once started, the server answering on the port
 * is checked to be this one (its data directory), so a test never talks to somebody else's server.
 */
export async function startPostgres(options: { user?: string; password?: string } = {}): Promise<Postgres> {
  const user = options.user ?? 'temporal';
  const password = options.password ?? 'temporal';
  const [bin, owner] = [await binaryDirectory(), await systemUser()];
  const root = await mkdtemp(path.join(tmpdir(), 'keel-postgres-'));
  if (owner !== undefined) await chown(root, owner.uid, owner.gid);
  const dataDirectory = path.join(root, 'data');
  const log = path.join(root, 'postgres.log');

  const postgresProgram = async (program: string, args: string[]): Promise<string> => {
    const [file, argv] =
      owner === undefined
        ? [path.join(bin, program), args]
        : ['runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args]];
    try {
      const { stdout } = await run(file, argv, { cwd: root, env: { PATH: process.env.PATH, LC_ALL: 'C' } });
      return stdout;
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`${program} ${args[0] ?? ''} failed: ${stderr || stdout}${await logTail(log)}`.trim(), {
        cause: error,
      });
    }
  };

  let port = 0;
  let running = false;
  let reportedDirectory = dataDirectory;
  const connectionUrl = (database = 'postgres') =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;

  const postmasterPid = async (): Promise<number> => {
    const text = await readFile(path.join(dataDirectory, 'postmaster.pid'), 'utf8').catch(() => '');
    const pid = Number(text.split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`PostgreSQL in ${dataDirectory} is not running`);
    return pid;
  };

  const start = async (): Promise<void> => {
    await postgresProgram('pg_ctl', ['start', '-w', '-t', '60', '-D', dataDirectory, '-l', log]);
    running = true;
    // pg_ctl -w waits for our postmaster; the port could still be answered by another server if ours
    // listened elsewhere. Ask the server on the port where its data lives.
    const client = new pg.Client({ connectionString: connectionUrl(), connectionTimeoutMillis: 10_000 });
    try {
      await client.connect();
      const result = await client.query<{ directory: string }>(
        "SELECT current_setting('data_directory') AS directory",
      );
      const directory = result.rows[0]?.directory;
      if (directory !== reportedDirectory)
        throw new Error(
          `the server on port ${port} has data directory ${directory}, not ${reportedDirectory}`,
        );
    } catch (error) {
      throw new Error(
        `PostgreSQL on 127.0.0.1:${port} is not the one started: ${String(error)}${await logTail(log)}`,
        {
          cause: error,
        },
      );
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  const stop = async (): Promise<void> => {
    await postgresProgram('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', dataDirectory]);
    running = false;
  };

  const kill = async (): Promise<void> => {
    const pid = await postmasterPid();
    const group = await processGroup(pid);
    // pg_ctl starts the postmaster in a session of its own, so its group is the postmaster and its
    // backends: kill them all, as a crash would, so that a restart does not wait for orphans.
    if (group === pid) process.kill(-pid, 'SIGKILL');
    else if (group !== undefined) process.kill(pid, 'SIGKILL');
    // Until reaped, not only dead: a new postmaster takes a zombie's PID in postmaster.pid for a
    // running server and refuses to start.
    await until(async () => (await processGroup(pid)) === undefined, `the postmaster ${pid} is reaped`, {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    if (group === pid)
      await until(async () => (await groupMembers(pid)).length === 0, `the backends of ${pid} are reaped`, {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
    running = false;
  };

  // A test process that ends without `close` (a failed hook, a timeout) must not leave a server
  // behind: at exit, synchronously, the postmaster's group is killed and the directory removed.
  const atExit = (): void => {
    if (running) {
      try {
        const pid = Number(readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (Number.isInteger(pid) && pid > 0) killGroupOrProcess(pid);
      } catch {
        // Gone already.
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', atExit);

  const close = async (): Promise<void> => {
    process.removeListener('exit', atExit);
    if (running) await stop().catch(() => kill());
    await rm(root, { recursive: true, force: true });
  };

  try {
    const passwordFile = path.join(root, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner !== undefined) await chown(passwordFile, owner.uid, owner.gid);
    await postgresProgram('initdb', [
      '-D',
      dataDirectory,
      '-U',
      user,
      '--auth=scram-sha-256',
      `--pwfile=${passwordFile}`,
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    await rm(passwordFile);
    reportedDirectory = await realpath(dataDirectory);
    // A port free a moment ago can be taken before the server binds it: try a few.
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort();
      await writeFile(
        path.join(dataDirectory, 'postgresql.auto.conf'),
        [
          "listen_addresses = '127.0.0.1'",
          `port = ${port}`,
          `unix_socket_directories = '${root}'`,
          // A test server: a crash of the machine need not be survived, only a crash of PostgreSQL.
          'fsync = off',
          '',
        ].join('\n'),
      );
      if (owner !== undefined)
        await chown(path.join(dataDirectory, 'postgresql.auto.conf'), owner.uid, owner.gid);
      try {
        await start();
        break;
      } catch (error) {
        const taken = /could not bind|Address already in use/u.test(await logTail(log));
        if (running) await stop().catch(() => kill());
        if (!taken || attempt >= 3) throw error;
      }
    }
  } catch (error) {
    process.removeListener('exit', atExit);
    await rm(root, { recursive: true, force: true });
    throw error;
  }

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    user,
    password,
    dataDirectory: reportedDirectory,
    url: connectionUrl,
    pid: postmasterPid,
    stop,
    start,
    kill,
    close,
  };
}

/** SIGKILL to the process group `pid` leads, or to `pid` alone when it leads none. */
function killGroupOrProcess(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    process.kill(pid, 'SIGKILL');
  }
}

/** The last lines of the server log, to explain a failure; empty when there is none. */
async function logTail(log: string): Promise<string> {
  const text = await readFile(log, 'utf8').catch(() => '');
  if (text.trim() === '') return '';
  return `\n--- end of ${log} ---\n${text.trimEnd().split('\n').slice(-30).join('\n')}`;
}
