import { ToolError } from '../../tool-error.js';

/** One request header as the model sends it: strict function calling has no free-form objects. */
export interface HeaderInput {
  name: string;
  value: string;
}

const SET_BY_TOOL = 'http_fetch sets it itself';
const CREDENTIAL = 'http_fetch does not send credentials';
const CLIENT_IDENTITY = 'it claims to come from a proxy';

/** Headers the model may not set, each with the reason a refusal gives. */
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
    authorization: CREDENTIAL,
    'proxy-authorization': CREDENTIAL,
    cookie: CREDENTIAL,
    cookie2: CREDENTIAL,
    forwarded: CLIENT_IDENTITY,
    via: CLIENT_IDENTITY,
    'x-real-ip': CLIENT_IDENTITY,
  }),
);

/** An HTTP token (RFC 9110): what a header name may consist of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The model's headers as a plain object keyed by lower-case name, after refusing what could smuggle
 * a second request (hop-by-hop and framing headers, CR/LF in values), carry credentials, or spoof
 * the client's address (`Forwarded`, `X-Forwarded-*`, `Proxy-*`).
 */
export function requestHeaders(headers: readonly HeaderInput[] | undefined): Record<string, string> {
  const result = new Map<string, string>();
  for (const { name, value } of headers ?? []) {
    const key = name.trim().toLowerCase();
    if (!TOKEN.test(key))
      throw new ToolError(`Header name ${JSON.stringify(name)} is not a valid HTTP token`);
    const reason =
      FORBIDDEN.get(key) ??
      (key.startsWith('proxy-') || key.startsWith('x-forwarded-') ? CLIENT_IDENTITY : undefined);
    if (reason !== undefined) throw new ToolError(`Header ${name} cannot be set: ${reason}`);
    if (/[\r\n\0]/.test(value)) throw new ToolError(`Header ${name} has a line break or NUL in its value`);
    if (result.has(key)) throw new ToolError(`Header ${name} is given twice; send it once`);
    result.set(key, value.trim());
  }
  return Object.fromEntries(result);
}
