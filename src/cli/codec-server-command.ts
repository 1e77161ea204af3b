import { readFile } from 'node:fs/promises';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { codecKeysFromEnvironment } from '../codec/codec-config.js';
import { startCodecServer } from '../codec/codec-server.js';
import { EncryptionCodec } from '../codec/encryption-codec.js';
import { ConfigError } from '../config-error.js';
import { EXIT, UsageError } from './io.js';
import type { Output } from './io.js';

/** What `keel codec-server` was given on its command line. */
export interface CodecServerCommandOptions {
  port: string | undefined;
  host: string | undefined;
  origins: string[];
  tokenFile: string | undefined;
  namespace: string | undefined;
}

/** Shortest token accepted: a guessable one would hand out every payload. */
const MIN_TOKEN_CHARS = 16;

/**
 * `keel codec-server`: decodes (and encodes) payloads for the Temporal Web UI and `temporal
 * --codec-endpoint`, with the keys the workers use, until Ctrl-C or SIGTERM.
 */
export async function codecServerCommand(out: Output, options: CodecServerCommandOptions): Promise<number> {
  const keys = codecKeysFromEnvironment();
  if (keys === undefined) {
    throw new ConfigError(
      'keel codec-server needs the keys the workers encrypt with: set KEEL_CODEC_KEYS_FILE (or KEEL_CODEC_KEY and KEEL_CODEC_KEY_ID)',
    );
  }
  if (options.tokenFile === undefined) {
    throw new UsageError(
      'Give --token-file <file>: the bearer token every caller must send (make one with `openssl rand -base64 32 > token`)',
    );
  }
  const token = (
    await readFile(options.tokenFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new ConfigError(
        `--token-file ${options.tokenFile} cannot be read (${error.code ?? error.message})`,
      );
    })
  ).trim();
  if (token.length < MIN_TOKEN_CHARS || /\s/u.test(token)) {
    throw new ConfigError(
      `--token-file ${options.tokenFile} must hold one token of at least ${MIN_TOKEN_CHARS} characters without spaces ` +
        '(make one with `openssl rand -base64 32`)',
    );
  }
  const port = Number(options.port ?? '8888');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be a port number, not ${JSON.stringify(options.port)}`);
  }
  const origins = options.origins.map((origin) => {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (url === undefined || !/^https?:$/u.test(url.protocol) || url.origin !== origin.replace(/\/$/u, '')) {
      throw new UsageError(
        `--origin must be the Web UI's origin, such as http://localhost:8233, not ${JSON.stringify(origin)}`,
      );
    }
    return url.origin;
  });
  const namespace = options.namespace ?? loadClientConnectConfig().namespace ?? 'default';
  const host = options.host ?? '127.0.0.1';
  const server = await startCodecServer({
    codec: new EncryptionCodec(keys),
    token,
    origins,
    namespace,
    host,
    port,
    say: out.note,
  });
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : port;
  out.note(
    `Keel codec server on http://${host}:${listening} for namespace ${namespace} ` +
      `(keys ${[...keys.keys.keys()].join(', ')}; browsers from ${origins.join(', ') || 'no origin'}). Ctrl-C to stop.`,
  );
  if (out.json) out.data({ codecServer: { url: `http://${host}:${listening}`, namespace } });
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop).on('SIGTERM', stop);
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return EXIT.ok;
}
