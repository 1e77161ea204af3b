/** A setting is missing or malformed; the message says which and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
