import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { PayloadCodec } from '@temporalio/common';
import { formatIssues } from '../contract/format-issues.js';
import { CodecError } from './codec-error.js';
import { PayloadsJson, payloadsFromJson, payloadsToJson } from './proto-json.js';
import { signInPage } from './sign-in-page.js';

/** How a {@link startCodecServer} serves. */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The bearer token every request must carry (or the session cookie signing in with it gives). */
  token: string;
  /** Browser origins allowed to call it (the Temporal Web UI's, e.g. `http://localhost:8233`). */
  origins: readonly string[];
  /** The namespace it decodes for: a request whose `X-Namespace` names another is refused. */
  namespace: string;
  host: string;
  port: number;
  /** One line per request: method, path, status; never a payload. */
  say?: (line: string) => void;
}

/** Largest request body accepted: a page of history's payloads, well under a runaway upload. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** The cookie a browser gets by signing in on the server's own page. */
export const SESSION_COOKIE = 'keel-codec-session';
const SESSION_SECONDS = 12 * 3600;

/** A request the server refuses, with the status and the message it answers with. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * Temporal's remote codec protocol over HTTP: `POST …/encode` and `POST …/decode` with a proto-JSON
 * `{"payloads": […]}`, for the Web UI and `temporal --codec-endpoint`. Every call needs the bearer
 * token (or the session cookie of a browser that signed in with it at `/`); browsers may call it only
 * from `origins`.
 */
export async function startCodecServer(options: CodecServerOptions): Promise<Server> {
  const session = createHmac('sha256', options.token).update('keel codec session').digest('base64url');
  const server = createServer((request, response) => {
    handle(request, response, options, session).then(
      (status) => options.say?.(`${request.method ?? '?'} ${pathOf(request)} ${status}`),
      (error: unknown) => {
        const refusal = error instanceof Refusal ? error : undefined;
        const status = refusal?.status ?? 500;
        if (!response.headersSent) {
          response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...refusal?.headers });
        }
        response.end(refusal ? refusal.message + '\n' : 'The codec server failed; its log says why.\n');
        options.say?.(
          `${request.method ?? '?'} ${pathOf(request)} ${status}` +
            (refusal ? '' : `: ${(error as Error).name}: ${(error as Error).message}`),
        );
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

function pathOf(request: IncomingMessage): string {
  return new URL(request.url ?? '/', 'http://codec').pathname;
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: CodecServerOptions,
  session: string,
): Promise<number> {
  const path = pathOf(request);
  const origin = request.headers.origin;
  const operation = /\/(encode|decode)$/u.exec(path)?.[1] as 'encode' | 'decode' | undefined;
  const cors: Record<string, string> =
    origin !== undefined && options.origins.includes(origin)
      ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' }
      : { vary: 'Origin' };
  if (origin !== undefined && cors['access-control-allow-origin'] === undefined && operation !== undefined) {
    throw new Refusal(
      403,
      `Origin ${origin} may not use this codec server (it allows ${options.origins.join(', ')})`,
    );
  }
  if (operation !== undefined && request.method === 'OPTIONS') {
    response.writeHead(204, {
      ...cors,
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type, x-namespace, authorization, authorization-extras',
      'access-control-max-age': '600',
    });
    response.end();
    return 204;
  }
  if (operation === undefined) return signIn(request, response, path, options, session);
  if (request.method !== 'POST')
    throw new Refusal(405, `Use POST for /${operation}`, { allow: 'POST, OPTIONS', ...cors });
  if (!authorized(request, options.token, session)) {
    throw new Refusal(
      401,
      'This codec server needs its token: send "Authorization: Bearer <token>" (temporal --codec-auth), or sign in ' +
        'at its own page in this browser and turn on "Include cross-origin credentials" in the UI',
      { 'www-authenticate': 'Bearer', ...cors },
    );
  }
  const namespace = request.headers['x-namespace'];
  if (typeof namespace === 'string' && namespace !== '' && namespace !== options.namespace) {
    throw new Refusal(403, `This codec server serves namespace ${options.namespace}, not ${namespace}`, cors);
  }
  if (!/^application\/json\b/iu.test(request.headers['content-type'] ?? '')) {
    throw new Refusal(415, 'Send the payloads as JSON (Content-Type: application/json)', cors);
  }
  const parsed = PayloadsJson.safeParse(parseJson(await readBody(request, cors), cors));
  if (!parsed.success) {
    throw new Refusal(
      400,
      `The body must be {"payloads": [...]} in proto-JSON: ${formatIssues(parsed.error).join('; ')}`,
      cors,
    );
  }
  let payloads;
  try {
    payloads = await options.codec[operation](payloadsFromJson(parsed.data));
  } catch (error) {
    if (error instanceof CodecError) throw new Refusal(422, error.message, cors);
    throw error;
  }
  response.writeHead(200, { 'content-type': 'application/json', ...cors });
  response.end(JSON.stringify(payloadsToJson(payloads)));
  return 200;
}

/** The bearer token, or the session cookie signing in gave, compared in constant time. */
function authorized(request: IncomingMessage, token: string, session: string): boolean {
  const bearer = /^Bearer (.+)$/u.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined && same(bearer, token)) return true;
  const cookies = (request.headers.cookie ?? '').split(';').map((cookie) => cookie.trim());
  const value = cookies
    .find((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`))
    ?.slice(SESSION_COOKIE.length + 1);
  return value !== undefined && same(value, session);
}

/** Equal in constant time: both sides hashed first, so neither length nor content leaks through timing. */
function same(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** `/`: a page to sign this browser in with the token (a session cookie), for the Web UI's codec calls. */
async function signIn(
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  options: CodecServerOptions,
  session: string,
): Promise<number> {
  if (path !== '/') throw new Refusal(404, 'Not found: this codec server answers POST …/encode and …/decode');
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(signInPage(options.origins, undefined));
    return 200;
  }
  if (request.method !== 'POST') throw new Refusal(405, 'Use GET or POST for /', { allow: 'GET, POST' });
  const form = new URLSearchParams((await readBody(request, {})).toString('utf8'));
  if (!same(form.get('token') ?? '', options.token)) {
    response.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(signInPage(options.origins, 'That is not the token this codec server was started with.'));
    return 401;
  }
  const secure = request.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  response.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'set-cookie': `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_SECONDS}${secure}`,
  });
  response.end(signInPage(options.origins, 'Signed in: this browser may decode for 12 hours.'));
  return 200;
}

async function readBody(request: IncomingMessage, headers: Record<string, string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, `The body is over ${MAX_BODY_BYTES} bytes`, headers);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer, headers: Record<string, string>): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new Refusal(400, 'The body is not JSON', headers);
  }
}
