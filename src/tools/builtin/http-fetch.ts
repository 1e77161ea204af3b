import { lookup as dnsLookup } from 'node:dns/promises';
import { z } from 'zod';
import { DEFAULT_OUTPUT_CAP, MAX_TOOL_TIMEOUT_SECONDS } from '../../contract/defaults.js';
import { defineTool, ToolDefinitionError } from '../define-tool.js';
import type { Tool } from '../define-tool.js';
import { ToolError } from '../tool-error.js';
import type { HostLookup } from './http-fetch/check-target.js';
import { fetchUrl } from './http-fetch/fetch-url.js';
import type { FetchPolicy } from './http-fetch/fetch-url.js';
import { HostPatternError, parseHostAllowList } from './http-fetch/host-allow-list.js';
import type { HostAllowList } from './http-fetch/host-allow-list.js';
import { requestHeaders } from './http-fetch/request-headers.js';

export type { HostLookup } from './http-fetch/check-target.js';

/** How an operator enables and limits http_fetch. */
export interface HttpFetchOptions {
  /**
   * Hosts the tool may reach: `docs.example.com`, `*.example.com` (any subdomain, not the domain
   * itself), either with `:port` to allow only that port; IPv6 in brackets. Case-insensitive;
   * internationalised names match their punycode form.
   */
  allowHosts: readonly string[];
  /** Connect to loopback, private, link-local, CGNAT and other non-public addresses. Default false. */
  allowPrivateAddresses?: boolean;
  /** Seconds for the whole fetch, redirects included. Default 30. */
  timeoutSeconds?: number;
  /** Bytes of (decompressed) body read; the rest is not downloaded. Default 2 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed before giving up. Default 5. */
  maxRedirects?: number;
  /** Allow POST requests (with a body). Default false: the tool is then read-only. */
  allowPost?: boolean;
  /** Characters of output, status line included; longer text is cut with a note. Default 12,000. */
  outputCharLimit?: number;
  /** Resolves host names; default `dns.promises.lookup(host, { all: true })`. Tests inject one. */
  lookup?: HostLookup;
}

/** Default seconds for one fetch. */
export const HTTP_FETCH_DEFAULT_TIMEOUT_SECONDS = 30;
/** Default bytes of body read. */
export const HTTP_FETCH_DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Default redirects followed. */
export const HTTP_FETCH_DEFAULT_MAX_REDIRECTS = 5;

/** Extra seconds the executor allows beyond the fetch timeout, so the fetch reports its own timeout. */
const EXECUTOR_GRACE_SECONDS = 5;

const defaultLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true });

/**
 * The http_fetch tool: GET (and, if allowed, POST) to allow-listed hosts over http(s), never to
 * private addresses unless allowed, with every redirect re-checked, the connection pinned to the
 * checked address, and time, size and output bounded. Returns the status, content type and text.
 */
export function createHttpFetchTool(options: HttpFetchOptions): Tool {
  const policy = policyFrom(options);
  const allowPost = options.allowPost ?? false;
  return defineTool({
    name: 'http_fetch',
    description: describe(policy, allowPost),
    schema: z.object({
      url: z
        .string()
        .min(1)
        .max(8_192)
        .describe('Absolute http or https URL, e.g. "https://docs.example.com/guide"'),
      method: z
        .enum(['GET', 'POST'])
        .optional()
        .describe(allowPost ? 'Default GET' : 'Default GET; POST is not enabled'),
      headers: z
        .array(z.object({ name: z.string().min(1).max(256), value: z.string().max(8_192) }))
        .max(32)
        .optional()
        .describe('Extra request headers, e.g. [{"name": "Accept", "value": "application/json"}]'),
      body: z
        .string()
        .max(1_000_000)
        .optional()
        .describe('Request body, POST only; set a Content-Type header for it'),
    }),
    readOnly: !allowPost,
    timeoutSeconds: policy.timeoutSeconds + EXECUTOR_GRACE_SECONDS,
    async execute(input, context) {
      const method = input.method ?? 'GET';
      if (method === 'POST' && !allowPost) {
        throw new ToolError('POST is not enabled for http_fetch; use GET, or ask an operator to allow POST.');
      }
      if (input.body !== undefined && method !== 'POST') {
        throw new ToolError('A body can only be sent with POST.');
      }
      const request = { url: input.url, method, headers: requestHeaders(input.headers), body: input.body };
      const send = (): Promise<string> => fetchUrl(request, policy, context);
      // A POST may change something: a retried call returns the first attempt's result instead of posting twice.
      return method === 'POST' ? context.once('http_post', send) : send();
    },
  });
}

function policyFrom(options: HttpFetchOptions): FetchPolicy {
  const fail = (why: string): never => {
    throw new ToolDefinitionError(`http_fetch: ${why}`);
  };
  if (options.allowHosts.length === 0) {
    fail('allowHosts is empty; list the hosts it may reach, or leave the tool out to disable it');
  }
  const allowList = allowListFrom(options.allowHosts);
  const timeoutSeconds = options.timeoutSeconds ?? HTTP_FETCH_DEFAULT_TIMEOUT_SECONDS;
  const maxResponseBytes = options.maxResponseBytes ?? HTTP_FETCH_DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = options.maxRedirects ?? HTTP_FETCH_DEFAULT_MAX_REDIRECTS;
  const outputCharLimit = options.outputCharLimit ?? DEFAULT_OUTPUT_CAP;
  if (!(timeoutSeconds > 0 && timeoutSeconds <= MAX_TOOL_TIMEOUT_SECONDS - EXECUTOR_GRACE_SECONDS)) {
    fail(`timeoutSeconds must be a positive number of seconds, got ${timeoutSeconds}`);
  }
  if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) {
    fail(`maxResponseBytes must be a positive whole number, got ${maxResponseBytes}`);
  }
  if (!(Number.isSafeInteger(maxRedirects) && maxRedirects >= 0)) {
    fail(`maxRedirects must be a whole number of at least 0, got ${maxRedirects}`);
  }
  if (!(Number.isSafeInteger(outputCharLimit) && outputCharLimit >= 1_000)) {
    fail(`outputCharLimit must be a whole number of at least 1000, got ${outputCharLimit}`);
  }
  return {
    allowList,
    allowPrivateAddresses: options.allowPrivateAddresses ?? false,
    lookup: options.lookup ?? defaultLookup,
    timeoutSeconds,
    maxResponseBytes,
    maxRedirects,
    outputCharLimit,
  };
}

function allowListFrom(entries: readonly string[]): HostAllowList {
  try {
    return parseHostAllowList(entries);
  } catch (error) {
    throw error instanceof HostPatternError ? new ToolDefinitionError(`http_fetch: ${error.message}`) : error;
  }
}

function describe(policy: FetchPolicy, allowPost: boolean): string {
  return (
    'Fetch a URL over HTTP(S) and read the response as text: the status line and content type come first, ' +
    'then the body (HTML converted to plain text; JSON, XML and other text as is; binary content is refused). ' +
    `Only these hosts can be reached: ${policy.allowList.entries.join(', ')} (*.domain means any subdomain). ` +
    `Redirects are followed up to ${policy.maxRedirects} times; bodies over ${policy.maxResponseBytes} bytes are cut. ` +
    (allowPost ? 'Use GET to read and POST (with a body) to send.' : 'Only GET is enabled.')
  );
}
