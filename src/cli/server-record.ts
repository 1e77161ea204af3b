import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { processIdentity } from './process-identity.js';

/** `<KEEL_DATA_DIR>/server.json`: the local Temporal server Keel started, and how to know it again. */
export const ServerRecord = z.object({
  pid: z.number().int().positive(),
  /** gRPC address clients connect to, `127.0.0.1:<port>`. */
  address: z.string(),
  port: z.number().int(),
  uiPort: z.number().int(),
  uiUrl: z.string(),
  /** The `temporal` binary it runs. */
  binary: z.string(),
  /** Its SQLite database. */
  dataFile: z.string(),
  /** Where its stdout and stderr go. */
  logFile: z.string(),
  /** When Keel started it (ISO 8601). */
  startedAt: z.string(),
  /** The process's start time as the kernel reports it: a reused PID has another. */
  processStartTime: z.string(),
  /** The arguments it was started with (after the binary). */
  args: z.array(z.string()).min(1),
  /**
   * Written right after the spawn, before the server answers (a first start creates its database),
   * so a start interrupted by Ctrl-C leaves a server that is still known as Keel's; dropped once it answers.
   */
  starting: z.boolean().optional(),
});
export type ServerRecord = z.infer<typeof ServerRecord>;

/** Path of the record in a data directory. */
export function serverRecordPath(dataDirectory: string): string {
  return path.join(dataDirectory, 'server.json');
}

/** What the record in a data directory says about the server, checked against the live process table. */
export type RecordedServer =
  | { state: 'none' }
  /** The recorded PID runs the recorded server: started at the recorded time, with its arguments. */
  | { state: 'alive'; record: ServerRecord }
  /** A record whose process is gone, or whose PID now belongs to something else: never signal it. */
  | { state: 'stale'; record: ServerRecord | undefined; reason: string };

/** Reads `server.json` and checks that its PID is still the server Keel started. */
export async function recordedServer(dataDirectory: string): Promise<RecordedServer> {
  let text: string;
  try {
    text = await readFile(serverRecordPath(dataDirectory), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
    throw error;
  }
  let parsed: ReturnType<typeof ServerRecord.safeParse>;
  try {
    parsed = ServerRecord.safeParse(JSON.parse(text));
  } catch {
    return { state: 'stale', record: undefined, reason: `${serverRecordPath(dataDirectory)} is not JSON` };
  }
  if (!parsed.success)
    return {
      state: 'stale',
      record: undefined,
      reason: `${serverRecordPath(dataDirectory)} is not a server record`,
    };
  const record = parsed.data;
  const identity = await processIdentity(record.pid);
  if (identity === undefined)
    return { state: 'stale', record, reason: `its process ${record.pid} has ended` };
  if (
    identity.startTime !== record.processStartTime ||
    !runsServer(identity.commandLine, record, dataDirectory)
  )
    return {
      state: 'stale',
      record,
      reason: `PID ${record.pid} now belongs to another process (${identity.commandLine.join(' ').slice(0, 120)})`,
    };
  return { state: 'alive', record };
}

/**
 * Whether a command line is this record's dev server: `temporal server start-dev` on this data
 * directory's database, with the recorded arguments. A launcher such as a pyenv shim execs the real
 * binary under the same PID, so the binary's path may differ; the arguments do not. The database is
 * checked against the data directory, not the record, so a rewritten record cannot name a process
 * of another program.
 */
function runsServer(commandLine: string[], record: ServerRecord, dataDirectory: string): boolean {
  const joined = commandLine.join(' ');
  const database = path.join(dataDirectory, 'temporal.db');
  return (
    record.dataFile === database &&
    joined.includes(' server start-dev ') &&
    joined.includes(`--db-filename ${database}`) &&
    joined.includes(record.args.join(' '))
  );
}

/** Writes the record (readable by its owner only: it names paths and ports of a private server). */
export async function writeServerRecord(dataDirectory: string, record: ServerRecord): Promise<void> {
  await writeFile(serverRecordPath(dataDirectory), JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
}

/** Removes the record. */
export async function removeServerRecord(dataDirectory: string): Promise<void> {
  await rm(serverRecordPath(dataDirectory), { force: true });
}
