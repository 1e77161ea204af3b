import { ToolError } from '../../tool-error.js';

/** One request header as the model sends it: strict function calling has no free-form objects. */
export interface HeaderInput {
  name: string;
  value: string;
}

const SET_BY_TOOL = 'http_fetch sets it itself';
const CREDENTIAL = 'http_fetch does not send credentials';
const CLIENT_IDENTITY = 'it claims to come from a proxy';
const METHOD_OVERRIDE = 'it overrides the request method, which http_fetch decides';
const URL_REWRITE = 'it asks the server to act on another URL or host than the one fetched';

/**
 * Headers the model may not set, each with the reason a refusal gives. Besides framing and
 * credentials, these are the headers that make a server (or the proxy in front of it) do something
 * other than what the request says: a method override turns a GET that http_fetch may repeat freely
 * into a DELETE; a rewritten URL or host passes a front proxy's path rules and the host allow-list
 * with one URL and reaches another; a spoofed client address passes IP allow-lists.
 */
const FORBIDDEN = new Map<string, string>(
  Object.entries({
    host: SET_BY_TOOL,
    connection: SET_BY_TOOL,
    'keep-alive': SET_BY_TOOL,
    'proxy-connection': SET_BY_TOOL,
    'transfer-encoding': SET_BY_TOOL,
    te: SET_BY_TOOL,
    trailer: SET_BY_TOOL,
    upgrade: SET_BY_TOOL,
    'content-length': SET_BY_TOOL,
    'accept-encoding': SET_BY_TOOL,
    expect: SET_BY_TOOL,
    'max-forwards': SET_BY_TOOL,
    authorization: CREDENTIAL,
    'proxy-authorization': CREDENTIAL,
    cookie: CREDENTIAL,
    cookie2: CREDENTIAL,
    'x-http-method-override': METHOD_OVERRIDE,
    'x-http-method': METHOD_OVERRIDE,
    'x-method-override': METHOD_OVERRIDE,
    'x-original-method': METHOD_OVERRIDE,
    'x-original-url': URL_REWRITE,
    'x-original-uri': URL_REWRITE,
    'x-original-path': URL_REWRITE,
    'x-rewrite-url': URL_REWRITE,
    'x-override-url': URL_REWRITE,
    'x-envoy-original-path': URL_REWRITE,
    'x-host': URL_REWRITE,
    'x-original-host': URL_REWRITE,
    'x-http-host-override': URL_REWRITE,
    forwarded: CLIENT_IDENTITY,
    via: CLIENT_IDENTITY,
    'x-real-ip': CLIENT_IDENTITY,
    'x-client-ip': CLIENT_IDENTITY,
    'x-remote-ip': CLIENT_IDENTITY,
    'x-remote-addr': CLIENT_IDENTITY,
    'x-originating-ip': CLIENT_IDENTITY,
    'x-cluster-client-ip': CLIENT_IDENTITY,
    'true-client-ip': CLIENT_IDENTITY,
    'cf-connecting-ip': CLIENT_IDENTITY,
    'fastly-client-ip': CLIENT_IDENTITY,
  }),
);

/** Families refused by prefix: `Proxy-*` and `X-Forwarded-*` (`-For`, `-Host`, `-Proto`, `-Prefix`, `-Uri`). */
const FORBIDDEN_PREFIXES: ReadonlyArray<[string, string]> = [
  ['proxy-', CLIENT_IDENTITY],
  ['x-forwarded-', CLIENT_IDENTITY],
];

/** An HTTP token (RFC 9110): what a header name may consist of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Why a header may not be set, if it may not. Names are compared with `_` read as `-`: CGI, PHP and
 * WSGI servers (and nginx with `underscores_in_headers`) see `X_Original_URL` as `X-Original-URL`.
 */
function refusal(name: string): string | undefined {
  const key = name.toLowerCase().replace(/_/g, '-');
  return FORBIDDEN.get(key) ?? FORBIDDEN_PREFIXES.find(([prefix]) => key.startsWith(prefix))?.[1];
}

/**
 * The model's headers as a plain object keyed by lower-case name, after refusing what could smuggle
 * a second request (hop-by-hop and framing headers, CR/LF in values), carry credentials, spoof the
 * client's address (`Forwarded`, `X-Forwarded-*`, `Proxy-*`, `X-Real-IP`), override the method
 * (`X-HTTP-Method-Override`) or make the server act on another URL (`X-Original-URL`, `X-Host`).
 */
export function requestHeaders(headers: readonly HeaderInput[] | undefined): Record<string, string> {
  const result = new Map<string, string>();
  for (const { name, value } of headers ?? []) {
    const key = name.trim().toLowerCase();
    if (!TOKEN.test(key))
      throw new ToolError(`Header name ${JSON.stringify(name)} is not a valid HTTP token`);
    const reason = refusal(key);
    if (reason !== undefined) throw new ToolError(`Header ${name} cannot be set: ${reason}`);
    if (/[\r\n\0]/.test(value)) throw new ToolError(`Header ${name} has a line break or NUL in its value`);
    if (result.has(key)) throw new ToolError(`Header ${name} is given twice; send it once`);
    result.set(key, value.trim());
  }
  return Object.fromEntries(result);
}
