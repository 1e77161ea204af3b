import type { Logger } from '../logger.js';
import type { Sanitizer } from './sanitize.js';

/**
 * A logger that redacts secrets from what it passes on: the message, and every string in `meta`,
 * errors included (message, stack, cause and their own fields), so the worker log keeps the full
 * error, its stack and its kind, but not the key a tool printed. Paths stay: the log is the
 * operator's.
 */
export function redactingLogger(logger: Logger, sanitizer: Sanitizer): Logger {
  const pass =
    (level: keyof Logger) =>
    (message: string, meta?: Record<string, unknown>): void => {
      const clean = sanitizer.output(message);
      if (meta === undefined) logger[level](clean);
      else logger[level](clean, redactMeta(meta, sanitizer, new Set()) as Record<string, unknown>);
    };
  return { debug: pass('debug'), info: pass('info'), warn: pass('warn'), error: pass('error') };
}

function redactMeta(data: unknown, sanitizer: Sanitizer, seen: Set<object>): unknown {
  if (data instanceof Error) return redactError(data, sanitizer, seen);
  if (typeof data === 'string') return sanitizer.output(data);
  if (data === null || typeof data !== 'object' || seen.has(data)) return data;
  seen.add(data);
  if (Array.isArray(data)) return data.map((item) => redactMeta(item, sanitizer, seen));
  const prototype = Object.getPrototypeOf(data) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, item]) => [sanitizer.output(key), redactMeta(item, sanitizer, seen)]),
  );
}

/** The error itself when it holds no secret; else a copy of the same class with the secrets redacted. */
function redactError(error: Error, sanitizer: Sanitizer, seen: Set<object>): Error {
  if (seen.has(error)) return error;
  seen.add(error);
  const fields: Record<string, unknown> = {};
  let changed = false;
  for (const key of ['message', 'stack', 'cause', ...Object.keys(error)]) {
    if (key in fields || !(key in error)) continue;
    const value = (error as unknown as Record<string, unknown>)[key];
    const clean = redactMeta(value, sanitizer, seen);
    fields[key] = clean;
    if (clean !== value) changed = true;
  }
  if (!changed) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const [key, value] of Object.entries(fields)) {
    Object.defineProperty(copy, key, {
      value,
      writable: true,
      configurable: true,
      enumerable: key !== 'stack' && key !== 'message' && key !== 'cause',
    });
  }
  return copy;
}
