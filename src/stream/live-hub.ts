import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { defaultPayloadConverter } from '@temporalio/common';
import type { PayloadCodec } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { payloadsToJson } from '../codec/proto-json.js';
import type { LiveLine, LiveStream, PublishedEvent } from '../contract/stream-event.js';

/** Where the worker serves live turns, and how subscribers reach it. */
export interface LiveHubOptions {
  /** The address to listen on (default `127.0.0.1`: this machine only). */
  host?: string;
  /** The port (default 0: any free one). */
  port?: number;
  /** The base URL subscribers use (default `http://<host>:<port>`, the machine's name for a wildcard host). */
  url?: string;
  /** The worker's payload codecs (encryption): events leave the worker encoded by them, as payloads do. */
  codecs?: () => readonly PayloadCodec[];
  /** How long a finished attempt stays readable, for a subscriber that found it just before its end (default 60 s). */
  keepMs?: number;
}

/** One model-turn attempt's live events, as {@link LiveHub.open} hands them to the activity. */
export interface LiveTurn {
  /** What the activity heartbeats, so subscribers find the attempt. */
  readonly stream: LiveStream;
  text(delta: string): void;
  toolCall(callId: string, name: string): void;
  /** The attempt ends: subscribers get `done` and the connection closes. */
  end(outcome: 'completed' | 'failed'): void;
  /** Whether a reader is connected now. */
  watched(): boolean;
  /** Called when a reader connects, before it gets what was published: the moment to publish what was held back. */
  onReader(callback: () => void): void;
}

type Listener = (line: LiveLine) => void;

interface Attempt {
  events: PublishedEvent[];
  done?: 'completed' | 'failed';
  listeners: Set<Listener>;
  onReader?: () => void;
}

const DEFAULT_KEEP_MS = 60_000;
/** Bytes a connection may have waiting to be sent: a reader further behind is cut off (it reconnects from where it was). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Connections served at once: live readers are few; more are refused rather than costing the worker. */
const MAX_CONNECTIONS = 1_000;
/** How often an open connection gets an empty line, so a reader can tell a silent turn from a lost worker. */
export const LIVE_PING_MS = 5_000;
const PATH_PREFIX = '/keel/live/';

/**
 * The worker's live stream: the text and call starts of the model turns it runs, served over HTTP to
 * whoever holds an attempt's unguessable URL (found in the attempt's heartbeat details, so only by
 * those who may describe the run and decode its payloads). Nothing is sent anywhere while nobody
 * reads: no signal, no workflow task, no history event. The server starts with the first turn.
 */
export class LiveHub {
  private readonly attempts = new Map<string, Attempt>();
  private server: Promise<{ server: http.Server; base: string }> | undefined;

  constructor(private readonly options: LiveHubOptions = {}) {}

  /** Opens an attempt of `turn` (starting the server if it is not yet listening). */
  async open(turn: number): Promise<LiveTurn> {
    const { base } = await this.listen();
    const id = randomBytes(18).toString('base64url');
    const attempt: Attempt = { events: [], listeners: new Set() };
    this.attempts.set(id, attempt);
    const emit = (event: PublishedEvent): void => {
      if (attempt.done !== undefined) return;
      const index = attempt.events.push(event) - 1;
      for (const listener of attempt.listeners) listener({ index, event });
    };
    return {
      stream: { url: `${base}${PATH_PREFIX}${id}`, turn },
      text: (delta) => {
        if (delta !== '') emit({ type: 'text', turn, delta });
      },
      toolCall: (callId, name) => emit({ type: 'tool_call', turn, callId, name }),
      watched: () => attempt.listeners.size > 0,
      onReader: (callback) => {
        attempt.onReader = callback;
      },
      end: (outcome) => {
        if (attempt.done !== undefined) return;
        attempt.done = outcome;
        for (const listener of attempt.listeners) listener({ done: outcome });
        attempt.listeners.clear();
        setTimeout(() => this.attempts.delete(id), this.options.keepMs ?? DEFAULT_KEEP_MS).unref();
      },
    };
  }

  /** Stops serving: open connections end (their readers see the attempts as dead). */
  async close(): Promise<void> {
    const started = this.server;
    this.server = undefined;
    if (started === undefined) return;
    const { server } = await started;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private listen(): Promise<{ server: http.Server; base: string }> {
    this.server ??= new Promise((resolve, reject) => {
      const server = http.createServer((request, response) => {
        // Nothing a client sends may take the worker down: a request that cannot be served is refused.
        response.on('error', () => response.destroy());
        try {
          this.serve(request, response);
        } catch {
          if (!response.headersSent) response.writeHead(400).end();
          else response.destroy();
        }
      });
      server.maxConnections = MAX_CONNECTIONS;
      const failed = (error: Error): void => {
        // Not kept: the next turn tries again (a port freed meanwhile, say).
        this.server = undefined;
        reject(error);
      };
      server.once('error', failed);
      const host = this.options.host ?? '127.0.0.1';
      server.listen(this.options.port ?? 0, host, () => {
        server.removeListener('error', failed);
        // Serving subscribers never keeps a process alive on its own.
        server.unref();
        const { port } = server.address() as AddressInfo;
        resolve({
          server,
          base: this.options.url?.replace(/\/+$/u, '') ?? `http://${urlHost(host)}:${port}`,
        });
      });
    });
    return this.server;
  }

  private serve(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://live');
    const attempt = url.pathname.startsWith(PATH_PREFIX)
      ? this.attempts.get(url.pathname.slice(PATH_PREFIX.length))
      : undefined;
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (attempt === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('No such live turn on this worker.\n');
      return;
    }
    const from = Number(url.searchParams.get('from') ?? '0');
    attempt.onReader?.();
    response.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    response.flushHeaders();
    const codecs = this.options.codecs?.() ?? [];
    // Lines are written in order even when encoding them takes a while.
    const queue: LiveLine[] = [];
    let draining = false;
    const drain = async (): Promise<void> => {
      draining = true;
      try {
        for (let line = queue.shift(); line !== undefined; line = queue.shift()) {
          const encoded = 'event' in line && codecs.length > 0 ? await encodeLine(line, codecs) : line;
          if (response.writableEnded || response.destroyed) return;
          response.write(JSON.stringify(encoded) + '\n');
          if ('done' in line) response.end();
          else if (response.writableLength > MAX_BUFFERED_BYTES) response.destroy();
        }
      } catch {
        response.destroy();
      } finally {
        draining = false;
      }
    };
    const write = (line: LiveLine): void => {
      queue.push(line);
      if (!draining) drain().catch(() => response.destroy());
    };
    for (const line of backlog(attempt.events, Number.isInteger(from) && from > 0 ? from : 0)) write(line);
    if (attempt.done !== undefined) {
      write({ done: attempt.done });
      return;
    }
    attempt.listeners.add(write);
    const ping = setInterval(() => {
      if (queue.length === 0 && !draining && !response.writableEnded && !response.destroyed)
        response.write('\n');
    }, LIVE_PING_MS).unref();
    response.on('close', () => {
      clearInterval(ping);
      attempt.listeners.delete(write);
    });
  }
}

/** The events from `from` on, consecutive text of one turn as one line (numbered by its last event). */
function backlog(events: readonly PublishedEvent[], from: number): LiveLine[] {
  const lines: { index: number; event: PublishedEvent }[] = [];
  for (let index = from; index < events.length; index++) {
    const event = events[index]!;
    const last = lines.at(-1);
    if (event.type === 'text' && last?.event.type === 'text' && last.index === index - 1) {
      lines[lines.length - 1] = { index, event: { ...last.event, delta: last.event.delta + event.delta } };
    } else {
      lines.push({ index, event });
    }
  }
  return lines;
}

async function encodeLine(
  line: { index: number; event: PublishedEvent },
  codecs: readonly PayloadCodec[],
): Promise<LiveLine> {
  const payloads = await encode([...codecs], [defaultPayloadConverter.toPayload(line.event)]);
  return { index: line.index, payload: payloadsToJson(payloads).payloads[0]! };
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return hostname();
  return host.includes(':') ? `[${host}]` : host;
}
