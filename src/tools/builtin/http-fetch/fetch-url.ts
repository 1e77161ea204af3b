import type { IncomingMessage } from 'node:http';
import { ToolError } from '../../tool-error.js';
import { checkedAddresses, checkUrl, parseUrl } from './check-target.js';
import type { TargetPolicy } from './check-target.js';
import { bodyText, contentKind, mediaType } from './response-text.js';
import { readBody, sendRequest } from './send-request.js';

/** Limits and rules for one fetch. */
export interface FetchPolicy extends TargetPolicy {
  timeoutSeconds: number;
  maxResponseBytes: number;
  maxRedirects: number;
  outputCharLimit: number;
}

/** What the model asked for, after its arguments were checked. */
export interface FetchRequest {
  url: string;
  method: 'GET' | 'POST';
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string | undefined;
}

/** Progress and cancellation from the tool's context. */
export interface FetchContext {
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

const DEFAULT_HEADERS: Record<string, string> = {
  'user-agent': 'Keel-http_fetch/1',
  accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1',
  'accept-encoding': 'gzip, deflate, br',
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Marks the abort reason of the fetch's own timeout. */
class FetchTimeout extends Error {
  override name = 'FetchTimeout';
}

/**
 * Fetches a URL under the policy and returns the text for the model: a status line, the content
 * type, notes on redirects and cuts, then the body as text. Every redirect hop is checked like the
 * first URL. Refusals and network failures are ToolErrors; an outside abort rejects with its reason.
 */
export async function fetchUrl(
  request: FetchRequest,
  policy: FetchPolicy,
  context: FetchContext,
): Promise<string> {
  const controller = new AbortController();
  const forward = (): void => controller.abort(context.signal.reason);
  if (context.signal.aborted) forward();
  else context.signal.addEventListener('abort', forward, { once: true });
  const timer = setTimeout(() => controller.abort(new FetchTimeout()), policy.timeoutSeconds * 1000);
  try {
    return await follow(request, policy, controller.signal, (details) => context.heartbeat(details));
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason ?? error;
    if (controller.signal.reason instanceof FetchTimeout) {
      throw new ToolError(
        `No complete response from ${request.url} within ${policy.timeoutSeconds} seconds; the request was stopped.`,
      );
    }
    throw networkError(error, request.url);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', forward);
  }
}

async function follow(
  request: FetchRequest,
  policy: FetchPolicy,
  signal: AbortSignal,
  heartbeat: (details?: unknown) => void,
): Promise<string> {
  let url = parseUrl(request.url);
  let { method, headers, body } = request;
  let previous: URL | undefined;
  for (let redirects = 0; ; redirects += 1) {
    checkUrl(url, policy.allowList, previous);
    const addresses = await checkedAddresses(url, policy, signal, previous);
    // No URL in the details: they are stored in Temporal, and a query string may hold something private.
    heartbeat({ redirects });
    const response = await sendRequest({
      url,
      method,
      headers: { ...DEFAULT_HEADERS, ...headers },
      body,
      addresses,
      signal,
    });
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(status) || location === undefined) {
      return render(response, url, redirects, policy, signal, heartbeat);
    }
    response.destroy();
    if (redirects >= policy.maxRedirects) {
      throw new ToolError(
        `Stopped after ${policy.maxRedirects} redirects, the limit; ${url.href} redirected again, to ${location}.`,
      );
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new ToolError(`${url.href} redirected to ${JSON.stringify(location)}, which is not a valid URL.`);
    }
    // As browsers do: 303, and 301/302 after a POST, continue as a GET without the body.
    if (status === 303 || (method === 'POST' && (status === 301 || status === 302))) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type'));
    }
    // The model's headers were meant for the host it named, not for wherever that host sends us.
    if (next.origin !== url.origin) {
      const contentType = headers['content-type'];
      headers = body === undefined || contentType === undefined ? {} : { 'content-type': contentType };
    }
    previous = url;
    url = next;
  }
}

async function render(
  response: IncomingMessage,
  url: URL,
  redirects: number,
  policy: FetchPolicy,
  signal: AbortSignal,
  heartbeat: (details?: unknown) => void,
): Promise<string> {
  const statusLine = `HTTP ${response.statusCode ?? 0} ${response.statusMessage ?? ''}`.trimEnd();
  const contentType = response.headers['content-type'];
  const kind = contentKind(contentType);
  if (kind === 'binary') {
    response.destroy();
    const length = response.headers['content-length'];
    throw new ToolError(
      `${url.href} answered ${statusLine} with Content-Type ${mediaType(contentType)}` +
        `${length === undefined ? '' : ` (${length} bytes)`}, which is not text; http_fetch returns ` +
        'text only (HTML, JSON, XML, plain text), so the body was not read.',
    );
  }
  const body = await readBody(response, policy.maxResponseBytes, signal, (bytes) => heartbeat({ bytes }));
  const text = bodyText(body, contentType, kind);
  const header = [statusLine, `Content-Type: ${contentType ?? '(none)'}`];
  if (redirects > 0)
    header.push(`URL: ${url.href} (after ${redirects} redirect${redirects === 1 ? '' : 's'})`);
  if (body.truncated) {
    header.push(
      `Note: the response is larger than ${policy.maxResponseBytes} bytes; only the first ${policy.maxResponseBytes} bytes were read.`,
    );
  }
  return withinLimit(header, text === '' ? '(empty body)' : text, policy.outputCharLimit);
}

/** Header lines, a blank line and the text, the text cut so that the whole fits in `limit` characters. */
function withinLimit(header: string[], text: string, limit: number): string {
  const whole = `${header.join('\n')}\n\n${text}`;
  if (whole.length <= limit) return whole;
  const note = (shown: number): string =>
    `Note: the text is ${text.length} characters; only the first ${shown} are shown.`;
  const room = Math.max(0, limit - header.join('\n').length - note(text.length).length - 3);
  const code = text.charCodeAt(room - 1);
  const shown = code >= 0xd800 && code <= 0xdbff ? room - 1 : room;
  return `${[...header, note(shown)].join('\n')}\n\n${text.slice(0, shown)}`;
}

/** Node network error codes, in words the model can act on. */
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed while sending',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ENOTFOUND: 'the host has no usable address',
  EPROTO: 'the TLS handshake failed',
  ERR_STREAM_PREMATURE_CLOSE: 'the connection closed before the response was complete',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is not valid for this host',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate could not be verified',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its TLS certificate could not be verified',
  Z_DATA_ERROR: 'its compressed body is corrupt',
  Z_BUF_ERROR: 'its compressed body is cut short',
};

/** A ToolError for a failure with a Node error code; anything else (our bug) is thrown as it is. */
function networkError(error: unknown, url: string): unknown {
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return error;
  const words =
    NETWORK_ERRORS[code] ??
    (code.startsWith('HPE_') ? 'the response is not valid HTTP' : 'the request failed');
  return new ToolError(`Could not fetch ${url}: ${words} (${code}).`);
}
