import { ConfigError } from './config-error.js';
import type { Variable } from './env.js';

/** A schema name Keel accepts: a plain SQL identifier, so it is safe to quote into a statement. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/u;

/**
 * Whether an `@` lies after the URL's authority (its `user:password@host:port` part): a password with
 * an unencoded `/`, `?` or `#` makes the parser end the authority early and read the rest of the
 * password as host or path, where no redaction would look for it.
 */
function atOutsideAuthority(url: string): boolean {
  const start = url.indexOf('//');
  if (start === -1) return url.includes('@');
  const rest = url.slice(start + 2);
  const end = rest.search(/[/?#]/u);
  return end !== -1 && rest.slice(end).includes('@');
}

/**
 * A PostgreSQL URL as messages may show it: scheme, user, host, port and database, with `***` for a
 * password and `?…` for parameters (they may hold one too). A value without a `//host` part is not
 * shown at all, since a password could be anywhere in it.
 */
export function describePostgresUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'a value that is not a URL (not shown: it may hold a password)';
  }
  if (parsed.host === '' || !url.startsWith(`${parsed.protocol}//`) || atOutsideAuthority(url)) {
    return 'a value that is not a URL with a host (not shown: it may hold a password)';
  }
  const user = parsed.username === '' ? '' : `${parsed.username}${parsed.password === '' ? '' : ':***'}@`;
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${parsed.search === '' ? '' : '?…'}`;
}

/** The URL's password, decoded, for the worker's list of secrets to redact; undefined when it has none. */
export function postgresUrlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

/**
 * A database error's first line with the URL's password masked: drivers may quote the connection
 * string or the password in their messages, and these reasons reach logs and errors.
 */
export function postgresErrorReason(error: unknown, url: string): string {
  const password = postgresUrlPassword(url);
  const reason = String((error as Error | undefined)?.message ?? error).split('\n')[0] ?? '';
  return password === undefined ? reason : reason.replaceAll(password, '***');
}

/**
 * An optional `postgres://` (or `postgresql://`) URL. A bad value is never quoted: a value that does
 * not parse as the URL it should be may still hold a password where `redactUrl` cannot find it.
 */
export const optionalPostgresUrl: Variable<string | undefined> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined) return undefined;
    const expected = `${name} must be a postgres://user:password@host:port/database URL`;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(`${expected}; its value is not a URL (not shown: it may hold a password)`);
    }
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
      throw new ConfigError(
        `${expected}; its value starts with ${JSON.stringify(parsed.protocol)} (the rest is not shown: it may hold a password)`,
      );
    if (parsed.hostname === '')
      throw new ConfigError(`${expected}; its value has no host (not shown: it may hold a password)`);
    if (atOutsideAuthority(value))
      throw new ConfigError(
        `${expected}; its value has an @ after the host (not shown: it may hold a password). ` +
          'Percent-encode the characters / ? # @ in the user name and password (/ is %2F).',
      );
    return value;
  },
};
