import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports come from below the kernel's ephemeral range. `bind(0)` only ever hands out ports inside
 * that range, and so does every dev server picking its own internal ports (membership, HTTP,
 * metrics) the same way. A port picked there and released a moment later can be taken by another
 * test's server before ours binds it, and that server then exits. Below the range, only processes
 * that ask for a fixed port compete, and binding first skips those.
 */
const LOWEST = 20_000;
/** Each test worker process (and the global setup) takes its own slice, so no two pick one port. */
const SLICES = 8;

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/u);
    const start = Number(low);
    return Number.isInteger(start) && start > LOWEST + SLICES * 100 ? start : 0;
  } catch {
    return 0;
  }
}

const rangeEnd = ephemeralStart();
const sliceSize = Math.floor((rangeEnd - LOWEST) / SLICES);
const slice = Number(process.env.VITEST_POOL_ID ?? 0) % SLICES;
const sliceStart = LOWEST + slice * sliceSize;
/** Starts at a random place, so files that follow each other in one worker rarely reuse a port. */
let next = Math.floor(Math.random() * sliceSize);

/** Listens on `port` (0: any) on 127.0.0.1, and resolves with the port once closed again, or undefined. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      port !== 0 && (error.code === 'EADDRINUSE' || error.code === 'EACCES')
        ? resolve(undefined)
        : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago and that no `bind(0)` will hand to anyone else. */
export async function freePort(): Promise<number> {
  if (rangeEnd === 0) {
    const port = await tryPort(0);
    if (port === undefined) throw new Error('no free port');
    return port;
  }
  for (let tried = 0; tried < sliceSize; tried += 1) {
    const candidate = sliceStart + (next % sliceSize);
    next += 1;
    if ((await tryPort(candidate)) !== undefined) return candidate;
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + sliceSize - 1}`);
}
