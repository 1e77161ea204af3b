import { ConfigError } from './config-error.js';
import type { Variable } from './env.js';

/** A schema name Keel accepts: a plain SQL identifier, so it is safe to quote into a statement. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/u;

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
  if (parsed.host === '' || !url.startsWith(`${parsed.protocol}//`)) {
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
    return value;
  },
};
