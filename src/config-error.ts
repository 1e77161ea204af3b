/** A setting is missing or malformed; the message says which and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The error for a Temporal server that cannot be reached: where, why, and what to do. */
export function unreachableTemporal(address: string, error: unknown): ConfigError {
  return new ConfigError(
    `Could not connect to Temporal at ${address} (${String((error as Error).message ?? error).split('\n')[0]}). ` +
      'Start one with `temporal server start-dev` (or `keel worker`), or set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE, TEMPORAL_API_KEY).',
  );
}
