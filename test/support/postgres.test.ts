import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from './postgres.js';
import type { Postgres } from './postgres.js';

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Whether `pid` runs: a zombie (this machine's init may be slow to reap one) has ended. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Polls `condition` until it holds (a killed process takes a moment to end). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('startPostgres', () => {
  let server: Postgres;

  beforeAll(async () => {
    server = await startPostgres();
  });

  afterAll(async () => {
    await server.close();
  });

  it('answers on loopback as its own user with a password, from its own data directory', async () => {
    expect(server.url()).toBe(`postgres://temporal:temporal@127.0.0.1:${server.port}/postgres`);
    const [row] = await query<{ directory: string; user: string; encoding: string }>(
      server.url(),
      "SELECT current_setting('data_directory') AS directory, current_user AS user, " +
        "pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = 'postgres'",
    );
    expect(row).toEqual({ directory: server.dataDirectory, user: 'temporal', encoding: 'UTF8' });
  });

  it('refuses a wrong password', async () => {
    const wrong = server.url().replace(':temporal@', ':wrong@');
    await expect(query(wrong, 'SELECT 1')).rejects.toThrow(/password authentication failed/u);
  });

  it('keeps its data across a kill and a start, and a stop and a start', async () => {
    await query(server.url(), 'CREATE TABLE kept (value text); INSERT INTO kept VALUES ($$before$$)');
    const first = await server.pid();
    await server.kill();
    expect(alive(first)).toBe(false);
    await expect(query(server.url(), 'SELECT 1')).rejects.toThrow();

    await server.start();
    const second = await server.pid();
    expect(second).not.toBe(first);
    expect(await query(server.url(), 'SELECT value FROM kept')).toEqual([{ value: 'before' }]);

    await server.stop();
    expect(alive(second)).toBe(false);
    await server.start();
    expect(await query(server.url(), 'SELECT value FROM kept')).toEqual([{ value: 'before' }]);
  });

  it('is killed and removed when its test process exits without closing it', async () => {
    const script =
      "import { startPostgres } from './test/support/postgres.ts';" +
      'const server = await startPostgres();' +
      'console.log(JSON.stringify({ pid: await server.pid(), directory: server.dataDirectory }));' +
      'process.exit(0);';
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ]);
    const { pid, directory } = JSON.parse(stdout) as { pid: number; directory: string };
    expect(existsSync(directory)).toBe(false);
    await until(() => !alive(pid));
  });

  it('removes its data directory when closed', async () => {
    const other = await startPostgres({ user: 'someone', password: 'p@ss word' });
    expect(other.url('x')).toBe(`postgres://someone:p%40ss%20word@127.0.0.1:${other.port}/x`);
    expect(await query(other.url(), 'SELECT current_user AS user')).toEqual([{ user: 'someone' }]);
    const pid = await other.pid();
    await other.close();
    expect(alive(pid)).toBe(false);
    expect(existsSync(other.dataDirectory)).toBe(false);
  });
});
