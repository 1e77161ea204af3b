import { secretsFromEnvironment } from '../safety/sanitize.js';
import { secretsInValue } from '../safety/secret-names.js';
import { isStdioServer } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

/**
 * The values in MCP server configurations that must never reach the model, history or logs: `env`
 * values judged as the worker judges its own environment (by a credential-like name such as
 * `GITHUB_TOKEN`, or a password inside a URL), header values judged the same way by their names
 * (`X-Api-Key`, `X-Auth-Token`) plus every `Authorization`, `Proxy-Authorization` and `Cookie` value,
 * but not `Accept` or a tenant id that would then be cut out of every output, the token of an
 * `Authorization: Bearer …` header on its own, and credentials inside the URL or an
 * argument (`https://user:pw@host`, `?token=…`).
 */
export function mcpConfigSecrets(configs: readonly McpServerConfig[]): string[] {
  const secrets: string[] = [];
  for (const config of configs) {
    if (isStdioServer(config)) {
      secrets.push(...secretsFromEnvironment(config.env ?? {}));
      for (const arg of config.args ?? []) secrets.push(...secretsInValue(arg));
    } else {
      const headers = Object.entries(config.headers ?? {});
      // Header names read as variable names: `X-Api-Key` is judged as `X_API_KEY` would be.
      secrets.push(
        ...secretsFromEnvironment(
          Object.fromEntries(
            headers.map(([name, value]) => [name.toUpperCase().replaceAll('-', '_'), value]),
          ),
        ),
      );
      for (const [name, value] of headers) {
        if (/^(?:proxy-)?authorization$|^cookie$/i.test(name)) secrets.push(value);
        const scheme = /^\s*(?:bearer|basic|token)\s+(\S+)\s*$/i.exec(value);
        if (scheme) secrets.push(scheme[1]!);
      }
      secrets.push(...secretsInValue(config.url));
    }
  }
  return [...new Set(secrets)].filter((secret) => secret.trim() !== '');
}
