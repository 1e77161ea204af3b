import { ConfigError } from '../config-error.js';
import { ensureLocalServer, localPorts } from './embedded.js';
import { dataDirectory, EXIT, UsageError } from './io.js';
import type { Output } from './io.js';
import { answers, stopLocalServer } from './local-server.js';
import { recordedServer, removeServerRecord, serverRecordPath } from './server-record.js';
import type { ServerRecord } from './server-record.js';

/**
 * `keel server start|status|stop`: the local Temporal server Keel runs for `KEEL_DATA_DIR` (see
 * `server.json`). `status` exits 0 when it runs and answers, 1 when not; `start` is idempotent;
 * `stop` signals only the PID verified to be the server Keel started.
 */
export async function serverCommand(out: Output, positionals: string[]): Promise<number> {
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
  const directory = dataDirectory();
  if (action === 'status') return status(out, directory);
  if (action === 'start') return start(out, directory);
  if (action === 'stop') return stop(out, directory);
  throw new UsageError(
    action === undefined
      ? 'Give start, status or stop, e.g. keel server status'
      : `Unknown action "${action}": give start, status or stop.`,
  );
}

async function status(out: Output, directory: string): Promise<number> {
  const recorded = await recordedServer(directory);
  if (recorded.state === 'alive') {
    const answering = await answers(recorded.record.address);
    report(out, recorded.record, answering);
    return answering ? EXIT.ok : EXIT.error;
  }
  if (recorded.state === 'stale') await removeServerRecord(directory);
  const reason =
    recorded.state === 'stale'
      ? `${serverRecordPath(directory)} was stale (${recorded.reason}); removed it, signalled nothing`
      : `no ${serverRecordPath(directory)}`;
  const address = `127.0.0.1:${localPorts().port}`;
  const foreign = await answers(address);
  if (out.json) out.data({ running: false, reason, ...(foreign ? { otherServer: address } : {}) });
  else {
    out.line(`Keel's local Temporal server is not running (${reason}).`);
    if (foreign) out.line(`A Temporal server that Keel did not start answers on ${address}.`);
  }
  return EXIT.error;
}

async function start(out: Output, directory: string): Promise<number> {
  const server = await ensureLocalServer({ dataDirectory: directory, say: out.note, allowDownload: false });
  if (server.kind !== 'keel')
    throw new ConfigError(
      `A Temporal server that Keel did not start already answers on ${server.address}: \`keel run\` and ` +
        "`keel worker` use it as it is. To start Keel's own, give it other ports (KEEL_LOCAL_PORT, KEEL_LOCAL_UI_PORT).",
    );
  if (!server.started) out.note(`Keel's local Temporal server is already running.`);
  report(out, server.record, true);
  return EXIT.ok;
}

async function stop(out: Output, directory: string): Promise<number> {
  const recorded = await recordedServer(directory);
  if (recorded.state !== 'alive') {
    if (recorded.state === 'stale') await removeServerRecord(directory);
    const reason =
      recorded.state === 'stale'
        ? `${serverRecordPath(directory)} was stale (${recorded.reason}); removed it, signalled nothing`
        : `no ${serverRecordPath(directory)}`;
    if (out.json) out.data({ stopped: false, reason });
    else out.line(`Keel's local Temporal server is not running (${reason}).`);
    return EXIT.ok;
  }
  const { record } = recorded;
  const how = await stopLocalServer(directory, record);
  if (out.json) out.data({ stopped: true, pid: record.pid, killed: how === 'killed' });
  else
    out.line(
      how === 'stopped'
        ? `Stopped Keel's local Temporal server (PID ${record.pid}).`
        : `Keel's local Temporal server (PID ${record.pid}) did not exit on SIGTERM within 15 s: killed it.`,
    );
  return EXIT.ok;
}

function report(out: Output, record: ServerRecord, answering: boolean): void {
  const uptimeSeconds = Math.max(0, Math.round((Date.now() - Date.parse(record.startedAt)) / 1000));
  if (out.json) {
    const { pid, address, port, uiPort, uiUrl, binary, dataFile, logFile, startedAt } = record;
    out.data({
      running: answering,
      ...(answering ? {} : { reason: record.starting === true ? 'starting' : 'not answering' }),
      ...(record.starting === true && !answering ? { starting: true } : {}),
      ...{ pid, address, port, uiPort, uiUrl, binary, dataFile, logFile, startedAt, uptimeSeconds },
    });
    return;
  }
  out.line(
    answering
      ? `Keel's local Temporal server is running.`
      : record.starting === true
        ? `Keel's local Temporal server is starting: it does not answer on ${record.address} yet.`
        : `Keel's local Temporal server runs but does not answer on ${record.address} (see its log).`,
  );
  for (const [label, value] of [
    ['PID', String(record.pid)],
    ['address', record.address],
    ['Web UI', record.uiUrl],
    ['data', record.dataFile],
    ['log', record.logFile],
    ['binary', record.binary],
    ['up', `${duration(uptimeSeconds)} (since ${record.startedAt})`],
  ] as const)
    out.line(`  ${label.padEnd(8)} ${value}`);
}

function duration(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  return hours > 0 ? `${hours}h ${minutes}m` : minutes > 0 ? `${minutes}m ${rest}s` : `${rest}s`;
}
