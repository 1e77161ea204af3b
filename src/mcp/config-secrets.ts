import { secretsFromEnvironment } from '../safety/sanitize.js';
import { secretsInValue } from '../safety/secret-names.js';
import { isStdioServer } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

/**
 * The values in MCP server configurations that must never reach the model, history or logs: `env`
 * values judged as the worker judges its own environment (by a credential-like name such as
 * `GITHUB_TOKEN`, or a password inside a URL), every header value (credentials, almost always), the
 * token of an `Authorization: Bearer …` header on its own, and credentials inside the URL or an
 * argument (`https://user:pw@host`, `?token=…`).
 */
export function mcpConfigSecrets(configs: readonly McpServerConfig[]): string[] {
  const secrets: string[] = [];
  for (const config of configs) {
    if (isStdioServer(config)) {
      secrets.push(...secretsFromEnvironment(config.env ?? {}));
      for (const arg of config.args ?? []) secrets.push(...secretsInValue(arg));
    } else {
      for (const value of Object.values(config.headers ?? {})) {
        secrets.push(value);
        const scheme = /^\s*(?:bearer|basic|token)\s+(\S+)\s*$/i.exec(value);
        if (scheme) secrets.push(scheme[1]!);
      }
      secrets.push(...secretsInValue(config.url));
    }
  }
  return [...new Set(secrets)].filter((secret) => secret.trim() !== '');
}
