import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { addAbortSignal, pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ToolError } from '../../tool-error.js';
import { effectivePort } from './host-allow-list.js';

/** One request of a fetch: a single hop, to addresses that were already checked. */
export interface HopRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
  /** Where to connect: the socket goes to these, whatever DNS says by the time it connects. */
  addresses: readonly LookupAddress[];
  signal: AbortSignal;
}

/**
 * Sends one request and resolves with the response once its headers arrive. The connection is
 * pinned to `addresses` through the socket's `lookup`, so a DNS answer that changes after the check
 * (rebinding) cannot move it; TLS still verifies the certificate against the host name. No agent
 * and no keep-alive: a pooled socket could otherwise be reused under a different check.
 */
export function sendRequest(request: HopRequest): Promise<IncomingMessage> {
  const { url } = request;
  const transport = url.protocol === 'https:' ? https : http;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(
      {
        host,
        port: effectivePort(url),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: { ...request.headers, host: url.host },
        agent: false,
        lookup: pinnedLookup(request.addresses),
        signal: request.signal,
      },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** A body read up to a byte limit. */
export interface Body {
  bytes: Buffer;
  /** The response had more than the limit; the rest was not read. */
  truncated: boolean;
}

/**
 * Reads a response body, decompressing gzip, deflate or br, and stops reading (closing the
 * connection) as soon as more than `maxBytes` arrive: a huge or endless body costs at most the limit.
 */
export async function readBody(
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
  onChunk: (bytesSoFar: number) => void,
): Promise<Body> {
  const stream = addAbortSignal(signal, decoded(response));
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        return { bytes: Buffer.concat(chunks, maxBytes), truncated: true };
      }
      chunks.push(buffer);
      size += buffer.length;
      onChunk(size);
    }
    return { bytes: Buffer.concat(chunks, size), truncated: false };
  } finally {
    stream.destroy();
    response.destroy();
  }
}

function decoded(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decompress =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (decompress !== undefined) return pipeline(response, decompress, () => undefined);
  if (encoding === 'identity' || encoding === '') return response;
  response.destroy();
  throw new ToolError(`The response is encoded with ${encoding}, which http_fetch cannot decode`);
}

/** A socket `lookup` that answers every query with the checked addresses. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family =
      options.family === 4 || options.family === 'IPv4'
        ? 4
        : options.family === 6 || options.family === 'IPv6'
          ? 6
          : undefined;
    const usable = addresses.filter((address) => family === undefined || address.family === family);
    const first = usable[0];
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no IPv${family ?? ''} address to connect to`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
    } else if (options.all === true) {
      callback(
        null,
        usable.map((address) => ({ ...address })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}
