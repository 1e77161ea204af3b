import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Compiler } from 'webpack';
import { z } from 'zod';
import { workflowInterceptorModules } from './telemetry/workflow-interceptor-modules.js';

/**
 * What the prebuilt bundle was built from, on its first line: each compiled module of this package
 * it holds (path relative to dist/, SHA-256) and the SDK version, so a bundle older than the code
 * beside it, or than the installed SDK, is never used.
 */
export const WorkflowBundleManifest = z.object({
  sdkVersion: z.string(),
  files: z.record(z.string(), z.string()),
});
export type WorkflowBundleManifest = z.infer<typeof WorkflowBundleManifest>;

/** Marks the manifest line at the top of the bundle. */
const MARKER = '// keel-workflow-bundle ';
/** This module's directory: dist/ once built, src/ in a checkout run through tsx. */
const here = path.dirname(fileURLToPath(import.meta.url));
/** Whether this process runs the TypeScript source (a checkout under tsx or vitest), not dist/. */
const fromSource = import.meta.url.endsWith('.ts');

/** Where `npm run build` writes the bundle: dist/workflow-bundle.js. */
export const prebuiltBundlePath = path.join(here, 'workflow-bundle.js');

/** The workflow entry point next to this file (`.ts` under tsx or vitest, `.js` once built). */
export const workflowsPath = path.join(here, 'workflows', fromSource ? 'index.ts' : 'index.js');

/** The installed version of a Temporal SDK package, as seen from this module. */
function sdkVersion(name: '@temporalio/workflow' | '@temporalio/worker'): string {
  const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/**
 * Bundles the compiled workflows (dist/workflows) into dist/workflow-bundle.js, with the manifest
 * of what it holds on its first line. `npm run build` runs it (`postbuild`).
 */
export async function writeWorkflowBundle(): Promise<void> {
  // The files webpack read, as it read them (the source map would name src/*.ts instead of dist/).
  const resources = new Set<string>();
  const collector = {
    apply(compiler: Compiler): void {
      compiler.hooks.afterCompile.tap('keel-bundle-manifest', (compilation) => {
        for (const module of compilation.modules) {
          const resource = (module as { resource?: string }).resource;
          if (resource !== undefined) resources.add(resource);
        }
      });
    },
  };
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    // The tracing interceptors are always in the bundle; with tracing off their spans are dropped.
    workflowInterceptorModules: [...workflowInterceptorModules],
    webpackConfigHook: (config) => ({ ...config, plugins: [...(config.plugins ?? []), collector] }),
    logger: {
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      log: () => undefined,
      warn: (message: string) => console.warn(message),
      error: (message: string) => console.error(message),
    },
  });
  // The bundler's own entry point lives in memory only (it names no file on disk): leave it out.
  const own = [...resources].filter(
    (resource) =>
      resource.startsWith(here + path.sep) &&
      !resource.includes(`${path.sep}node_modules${path.sep}`) &&
      existsSync(resource),
  );
  const files: Record<string, string> = {};
  for (const resource of own.sort()) files[path.relative(here, resource)] = await sha256(resource);
  if (Object.keys(files).length === 0) throw new Error(`the workflow bundle holds no module of ${here}`);
  // The workflow library inside the bundle must match the worker that runs it (they release together).
  const manifest: WorkflowBundleManifest = { sdkVersion: sdkVersion('@temporalio/workflow'), files };
  await writeFile(prebuiltBundlePath, `${MARKER}${JSON.stringify(manifest)}\n${bundle.code}`);
}

/**
 * Why the prebuilt bundle cannot be used here, or undefined when it can: absent, built from other
 * code than the compiled modules beside it, or for another SDK version. A checkout running src/
 * never uses one (dist/ may be older than the source).
 */
export async function prebuiltBundleProblem(): Promise<string | undefined> {
  if (fromSource) return 'a checkout runs the TypeScript source, so the workflow code is bundled from src/';
  let firstLine: string;
  try {
    const handle = await open(prebuiltBundlePath, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(256 * 1024), 0, 256 * 1024, 0);
      firstLine = buffer.subarray(0, bytesRead).toString('utf8').split('\n', 1)[0]!;
    } finally {
      await handle.close();
    }
  } catch {
    return `there is no prebuilt ${prebuiltBundlePath} (\`npm run build\` makes one)`;
  }
  const parsed = firstLine.startsWith(MARKER) ? parseManifest(firstLine.slice(MARKER.length)) : undefined;
  if (!parsed?.success) return `${prebuiltBundlePath} has no manifest (\`npm run build\` rebuilds it)`;
  const manifest = parsed.data;
  const installed = sdkVersion('@temporalio/worker');
  if (manifest.sdkVersion !== installed)
    return `${prebuiltBundlePath} was built for Temporal SDK ${manifest.sdkVersion}, the worker is ${installed}`;
  for (const [file, hash] of Object.entries(manifest.files)) {
    const actual = await sha256(path.join(here, file)).catch(() => undefined);
    if (actual !== hash)
      return `${path.join(here, file)} changed since ${prebuiltBundlePath} was built (\`npm run build\` rebuilds it)`;
  }
  return undefined;
}

function parseManifest(text: string): ReturnType<typeof WorkflowBundleManifest.safeParse> | undefined {
  try {
    return WorkflowBundleManifest.safeParse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The workflow code for `Worker.create`: the prebuilt bundle when it is current (see
 * {@link prebuiltBundleProblem}) unless a `failureConverterPath` must be bundled in, else the
 * workflows to bundle now (the worker bundles them with its data converter's failure converter),
 * which takes seconds and is said on `say` with the reason.
 */
export async function workflowCode(
  say: (line: string) => void,
  failureConverterPath?: string,
): Promise<Pick<WorkerOptions, 'workflowBundle'> | Pick<WorkerOptions, 'workflowsPath'>> {
  // The prebuilt bundle holds the default failure converter, which leaves workflow failures readable.
  const problem =
    failureConverterPath === undefined
      ? await prebuiltBundleProblem()
      : 'payloads are encrypted, so the workflow code is bundled with the failure converter that encrypts failures too';
  if (problem === undefined) return { workflowBundle: { codePath: prebuiltBundlePath } };
  say(`Bundling the workflow code (about 5 s; ${problem})…`);
  return { workflowsPath };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeWorkflowBundle().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
