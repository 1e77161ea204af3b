/**
 * Exits once stdout and stderr have passed on what was written: to a pipe, writes are asynchronous,
 * and exiting at once cut a large `--json` (an eval's report, an exported history) short.
 *
 * The entry points (`keel`, `node dist/worker.js`) exit this way instead of waiting for the event
 * loop to drain: a terminal prompt or a native handle must not keep a finished command waiting, and
 * a worker that failed to start must exit so that its supervisor (a container's restart policy,
 * systemd) starts it again. `Worker.create` of the Temporal SDK leaves its workflow threads running
 * when the server refuses the worker (a namespace not registered yet), which kept such a worker alive
 * and idle forever.
 */
export function exitWhenWritten(code: number): void {
  let open = 2;
  const written = (): void => {
    open -= 1;
    if (open === 0) process.exit(code);
  };
  process.stdout.write('', written);
  process.stderr.write('', written);
}
