/** One allow-list entry: a host, or `*.` and a domain (its subdomains, not the domain itself). */
interface HostPattern {
  /** Lower-case, punycode, no trailing dot; IPv6 in brackets, as `URL.hostname` gives it. */
  host: string;
  wildcard: boolean;
  /** Only this port when set; any port otherwise. */
  port: number | undefined;
  /** The entry as the tool shows it to the model and in refusals. */
  display: string;
}

/** The hosts an operator lets http_fetch reach. */
export interface HostAllowList {
  /** Whether the host and port of `url` are on the list. */
  allows(url: URL): boolean;
  /** The entries, normalised, for messages. */
  readonly entries: readonly string[];
}

/** Why an allow-list entry cannot be used. */
export class HostPatternError extends Error {
  override name = 'HostPatternError';
}

/**
 * Parses the allow-list: each entry is `host`, `host:port`, `*.domain` or `*.domain:port`; IPv6 in
 * brackets. Hosts go through the URL parser, so `Bücher.example` becomes `xn--bcher-kva.example` and
 * `127.1` becomes `127.0.0.1`, exactly as the URLs they are compared with.
 */
export function parseHostAllowList(entries: readonly string[]): HostAllowList {
  const patterns = entries.map(parsePattern);
  return {
    entries: patterns.map((pattern) => pattern.display),
    allows(url) {
      const host = withoutTrailingDot(url.hostname);
      const port = effectivePort(url);
      return patterns.some(
        (pattern) =>
          (pattern.port === undefined || pattern.port === port) &&
          (pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host),
      );
    },
  };
}

/** The port a URL connects to: its own, or its scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function parsePattern(entry: string): HostPattern {
  const text = entry.trim().toLowerCase();
  const fail = (why: string): never => {
    throw new HostPatternError(`Allowed host ${JSON.stringify(entry)} is not usable: ${why}`);
  };
  if (text === '' || text === '*') fail('give a host name, e.g. "docs.example.com" or "*.example.com"');
  const wildcard = text.startsWith('*.');
  const rest = wildcard ? text.slice(2) : text;
  // A port is the digits after the last colon, unless that colon is inside an IPv6 address.
  const [, before = '', digits] = /^(.*?):(\d+)$/.exec(rest) ?? [];
  const hasPort = digits !== undefined && (!before.includes(':') || before.endsWith(']'));
  const hostPart = hasPort ? before : rest;
  const port = hasPort ? Number(digits) : undefined;
  if (port !== undefined && !(port >= 1 && port <= 65535)) fail('the port must be 1-65535');
  if (/[/?#@\\*\s]/.test(hostPart)) fail('give only a host and optionally a port, without scheme or path');
  let parsed: URL;
  try {
    parsed = new URL(`http://${hostPart}`);
  } catch {
    return fail('it is not a valid host name or IP address');
  }
  if (parsed.port !== '' || parsed.pathname !== '/') fail('it is not a valid host name or IP address');
  const host = withoutTrailingDot(parsed.hostname);
  if (host === '') fail('the host is empty');
  if (wildcard && isIpLiteral(host)) fail('a wildcard cannot apply to an IP address');
  const display = `${wildcard ? '*.' : ''}${host}${port === undefined ? '' : `:${port}`}`;
  return { host, wildcard, port, display };
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host);
}

function withoutTrailingDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}
