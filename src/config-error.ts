/** A setting is missing or malformed; the message says which and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The error for a Temporal server that cannot be reached: where, why, and what to do. `connection`
 * is what was tried: with an API key, Temporal's environment configuration turns TLS on by itself,
 * which a server without TLS (a dev server, `keel server`) never answers, so that is said.
 */
export function unreachableTemporal(
  address: string,
  error: unknown,
  connection: { apiKey?: unknown; tls?: unknown } = {},
): ConfigError {
  const tlsByKey =
    connection.apiKey !== undefined && connection.tls !== undefined && connection.tls !== false
      ? ' TLS is on because TEMPORAL_API_KEY is set (Temporal turns it on with an API key), and a server ' +
        'without TLS, such as a dev server or `keel server`, never answers it: set TEMPORAL_TLS=false to ' +
        'connect to one without TLS, or unset TEMPORAL_API_KEY.'
      : '';
  return new ConfigError(
    `Could not connect to Temporal at ${address} (${String((error as Error).message ?? error).split('\n')[0]}).${tlsByKey} ` +
      'Start one with `temporal server start-dev` (or `keel worker`), or set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE, TEMPORAL_API_KEY).',
  );
}
