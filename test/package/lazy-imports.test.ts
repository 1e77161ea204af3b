import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, inject, it } from 'vitest';

/** Module resolution hooks that name, on stderr, the entry modules of OpenTelemetry's and MCP's SDKs a process loads. */
const HOOKS = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (/sdk-trace-base|exporter-trace-otlp|interceptors-opentelemetry\\/lib\\/index|modelcontextprotocol\\/sdk\\/dist\\/esm\\/client\\/index/.test(resolved.url))
    process.stderr.write('loaded ' + resolved.url.replace(/.*node_modules\\//, '') + '\\n');
  return resolved;
}`;

it("starts a worker process without tracing or MCP servers and loads neither OpenTelemetry's SDK nor MCP's, which they then load", async () => {
  const built = inject('builtKeel');
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-lazy-imports-'));
  const hooks = path.join(directory, 'hooks.mjs');
  const register = path.join(directory, 'register.mjs');
  await writeFile(hooks, HOOKS);
  await writeFile(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const dist = (file: string): string =>
    JSON.stringify(pathToFileURL(path.join(built.root, 'dist', file)).href);
  // What `keel worker` imports, then telemetry started without tracing, then with it.
  const script = `
    await import(${dist('cli/worker-command.js')});
    const { startTelemetry } = await import(${dist('telemetry/start-telemetry.js')});
    const off = { captureContent: false, tracing: undefined, prometheusBindAddress: undefined };
    await (await startTelemetry(off, { installRuntime: false })).shutdown();
    process.stderr.write('tracing on\\n');
    const on = { ...off, tracing: { tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'keel' } };
    await (await startTelemetry(on, { installRuntime: false })).shutdown();
    await import(${dist('mcp/mcp-servers.js')});
  `;
  const stderr = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(register).href, '--input-type=module', '-e', script],
      { timeout: 60_000 },
      (error, _stdout, output) =>
        error ? reject(new Error(`${error.message}\n${output}`)) : resolve(output),
    );
  });
  const [before, after] = stderr.split('tracing on\n');
  expect(before?.match(/^loaded .*/gm) ?? []).toEqual([]);
  expect(after).toMatch(/^loaded @opentelemetry\/sdk-trace-base\//m);
  expect(after).toMatch(/^loaded @opentelemetry\/exporter-trace-otlp-http\//m);
  expect(after).toMatch(/^loaded @temporalio\/interceptors-opentelemetry\//m);
  expect(after).toMatch(/^loaded @modelcontextprotocol\/sdk\//m);
});
