import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { McpStdioServerConfig } from '../../../src/mcp/index.js';
import { createSanitizer } from '../../../src/safety/sanitize.js';
import type { ExecuteRequest, ExecutorDependencies } from '../../../src/tools/executor.js';
import type { Tool } from '../../../src/tools/define-tool.js';
import { MemoryIdempotencyStore } from '../../../src/tools/idempotency.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { freePort } from '../../support/free-port.js';
import { RecordingLogger } from '../../support/loggers.js';

const modules = fileURLToPath(new URL('../../../node_modules/@modelcontextprotocol/', import.meta.url));

/** The entry point of `@modelcontextprotocol/server-filesystem`, as installed. */
export const FILESYSTEM_SERVER = path.join(modules, 'server-filesystem/dist/index.js');
/** The entry point of `@modelcontextprotocol/server-everything`, as installed. */
export const EVERYTHING_SERVER = path.join(modules, 'server-everything/dist/index.js');
/** A pass-through that copies what the client sends to stderr (see the script). */
export const STDIO_TAP = fileURLToPath(new URL('./stdio-tap.ts', import.meta.url));

/** server-filesystem over stdio, allowed to touch `directory` only. */
export function filesystemServer(
  name: string,
  directory: string,
  extra: Partial<McpStdioServerConfig> = {},
): McpStdioServerConfig {
  return { name, command: process.execPath, args: [FILESYSTEM_SERVER, directory], ...extra };
}

/** server-everything over stdio; with `tap`, behind {@link STDIO_TAP}. */
export function everythingServer(
  name: string,
  extra: Partial<McpStdioServerConfig> & { tap?: boolean } = {},
): McpStdioServerConfig {
  const { tap, ...rest } = extra;
  const args = [EVERYTHING_SERVER, 'stdio'];
  return {
    name,
    command: process.execPath,
    args: tap === true ? ['--import', 'tsx', STDIO_TAP, process.execPath, ...args] : args,
    ...rest,
  };
}

/** A temporary, real directory. */
export async function temporaryDirectory(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), prefix)));
}

/** What the executor needs around these tools, with a recording log and a sanitizer that knows `secrets`. */
export function executorDependencies(
  tools: readonly Tool[],
  secrets: readonly string[] = [],
): ExecutorDependencies & { logger: RecordingLogger } {
  return {
    registry: new ToolRegistry(tools),
    sanitizer: createSanitizer({ secrets }),
    logger: new RecordingLogger(),
    idempotencyStore: new MemoryIdempotencyStore(),
  };
}

/** A call of `name` with these arguments, as the activity would pass it to the executor. */
export function callOf(
  name: string,
  args: object | string,
  extra: Partial<ExecuteRequest> = {},
): ExecuteRequest {
  return {
    call: { callId: 'call_1', name, argumentsJson: typeof args === 'string' ? args : JSON.stringify(args) },
    idempotencyKey: 'run-1:call_1',
    outputCharLimit: 12_000,
    ...extra,
  };
}

/** Whether a process with this id exists (a reaped child no longer does). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** server-everything over Streamable HTTP, started by the test on a free port. */
export interface HttpServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts server-everything's Streamable HTTP transport on `port` (one that was free when absent), and resolves once
 * this very process says it listens on that port (a port taken by someone else in between makes it
 * exit instead, and the start fails).
 */
export async function startHttpEverythingServer(port?: number): Promise<HttpServer> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      if (line.includes(`listening on port ${port}`)) resolve();
    });
    exited.then(
      (code) => reject(new Error(`server-everything exited (${code}) before listening on ${port}`)),
      reject,
    );
    child.once('error', reject);
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Ids of this process's children whose command line mentions `script` (Linux: read from /proc). */
export async function childrenRunning(script: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== process.pid) continue;
      const commandLine = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (commandLine.includes(script)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
