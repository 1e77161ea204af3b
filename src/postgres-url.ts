import { ConfigError } from './config-error.js';
import type { Variable } from './env.js';

/** The URL with its password replaced by `***`, for errors and logs; `<not a URL>` when it does not parse. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<not a URL>';
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/** The URL's password, decoded, or undefined: so a sanitizer can keep it out of observations and logs. */
export function urlPassword(url: string): string | undefined {
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
