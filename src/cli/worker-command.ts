import { Console } from 'node:console';
import { workerConfigFromEnvironment } from '../config.js';
import { runWorker } from '../worker.js';
import { resolveTarget } from './embedded.js';
import { dataDirectory, EXIT } from './io.js';
import type { Output } from './io.js';

/** `keel worker`: a worker on the task queue (and a local server when none runs) until Ctrl-C. */
export async function workerCommand(
  out: Output,
  taskQueue: string,
  toolsModule: string | undefined,
): Promise<number> {
  const config = {
    ...workerConfigFromEnvironment(),
    taskQueue,
    ...(toolsModule === undefined ? {} : { toolsModule }),
  };
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: true });
  try {
    await runWorker(config, {
      target,
      ...(target.dataDirectory === undefined ? {} : { dataDirectory: target.dataDirectory }),
      // With --json, stdout carries one JSON line once the worker polls; its own lines go to stderr.
      ...(out.json
        ? {
            console: new Console(process.stderr),
            onReady: () =>
              out.data({
                worker: {
                  taskQueue,
                  namespace: target.namespace,
                  address: target.connectionOptions.address ?? 'localhost:7233',
                },
              }),
          }
        : {}),
    });
    return EXIT.ok;
  } finally {
    await target.embedded?.stop();
  }
}
