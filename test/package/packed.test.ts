import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CliProcess } from '../support/cli.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import {
  buildAndPack,
  childEnvironment,
  exampleDirectory,
  installExample,
  repositoryRoot,
  run,
  timed,
} from './packed-project.js';
import type { Packed, Timings } from './packed-project.js';

interface Manifest {
  version: string;
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readManifest = async (directory: string): Promise<Manifest> =>
  JSON.parse(await readFile(path.join(directory, 'package.json'), 'utf8')) as Manifest;

const timings: Timings = {};
let directory: string | undefined;
let packed: Packed;
let project: string;

// One build, one pack, one install for the whole file: they are what takes the time.
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'keel-package-'));
  packed = await buildAndPack(directory, timings);
  project = await installExample(packed.tarball, directory, timings);
}, 300_000);

afterAll(async () => {
  console.log(`packed package test, seconds: ${JSON.stringify(timings)}`);
  // The tarball and the user's project both live here, so a failed install leaves nothing behind.
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the built code with its declarations, the CLI, the JSON Schemas, the README and package.json, and nothing else', async () => {
    const files = packed.files.map((file) => file.path);
    const stray = files.filter(
      (file) =>
        !/^dist\/.+\.(?:js|d\.ts)$/.test(file) &&
        !/^docs\/schemas\/[\w-]+\.schema\.json$/.test(file) &&
        !['bin/keel.js', 'README.md', 'LICENSE', 'package.json'].includes(file),
    );
    expect(stray).toEqual([]);
    // An eval file's "$schema" can name node_modules/keel/docs/schemas/eval-file.schema.json.
    expect(files).toContain('docs/schemas/eval-file.schema.json');
    expect(files).toContain('LICENSE');
    // The prebuilt workflow bundle the worker loads (not a module to import) ships too.
    expect(files).toContain('dist/workflow-bundle.js');
    // Every module has its declarations; every export and the bin point at a file that shipped.
    const modules = files.filter(
      (file) => file.endsWith('.js') && file.startsWith('dist/') && file !== 'dist/workflow-bundle.js',
    );
    expect(modules.filter((file) => !files.includes(file.replace(/\.js$/, '.d.ts')))).toEqual([]);
    const manifest = await readManifest(repositoryRoot);
    const targets = [
      ...Object.values(manifest.exports).flatMap((target) =>
        typeof target === 'string' ? [target] : Object.values(target),
      ),
      ...Object.values(manifest.bin),
    ].map((target) => path.posix.normalize(target));
    expect(targets.filter((target) => !files.includes(target))).toEqual([]);
    expect(Object.keys(manifest.exports).sort()).toEqual(
      ['.', './client', './package.json', './testing', './workflow'].sort(),
    );
  });

  it('means, inside the repository, the sources its exports are built from (so the examples typecheck and lint)', async () => {
    const manifest = await readManifest(repositoryRoot);
    const { config } = ts.readConfigFile(
      path.join(repositoryRoot, 'tsconfig.check.json'),
      ts.sys.readFile,
    ) as {
      config: { compilerOptions: { paths: Record<string, string[]> } };
    };
    const fromExports = Object.fromEntries(
      Object.entries(manifest.exports).flatMap(([key, target]) =>
        typeof target === 'string'
          ? []
          : [
              [
                `keel${key.slice(1)}`,
                [target.types!.replace(/^\.\/dist\//, './src/').replace(/\.d\.ts$/, '.ts')],
              ],
            ],
      ),
    );
    expect(config.compilerOptions.paths).toEqual(fromExports);
  });

  it('is named in the example project with the versions Keel itself depends on', async () => {
    const keel = await readManifest(repositoryRoot);
    const example = await readManifest(exampleDirectory);
    const versions = { ...keel.dependencies, ...keel.devDependencies };
    const shared = Object.entries({ ...example.dependencies, ...example.devDependencies }).filter(
      ([name]) => name !== 'keel',
    );
    expect(shared.filter(([name, version]) => versions[name] !== version)).toEqual([]);
    expect(example.dependencies.keel).toBe(`^${keel.version}`);
  });

  it("runs the example's own worker, hosting its workflow and Keel's, and completes a run whose tool and MCP results reach the model", async () => {
    const policy = path.join(project, 'policies', 'returns.md');
    const model = await ScriptedModel.start([
      reply.calls(
        { name: 'lookup_order', arguments: { orderId: 'A-1' }, callId: 'call_order' },
        { name: 'policies__read_text_file', arguments: { path: policy }, callId: 'call_policy' },
      ),
      reply.text('Order A-1 has shipped with DHL; it can be returned within 30 days.'),
    ]);
    const environment = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'sk-test',
    };
    const worker = new CliProcess(
      spawn(process.execPath, ['dist/worker.js'], {
        cwd: project,
        env: childEnvironment(environment),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      await worker.waitForOutput('worker ready');
      // The client fails the test at once if the worker dies instead of serving the run.
      const output = await timed(timings, 'run', () =>
        Promise.race([
          run(process.execPath, ['dist/client.js'], { cwd: project, env: environment }),
          worker.exited.then((code) => {
            throw new Error(
              `the worker exited (${code}) during the run:\n${worker.stdout}\n${worker.stderr}`,
            );
          }),
        ]),
      );
      const { greeting, result } = JSON.parse(output) as {
        greeting: string;
        result: { status: string; finalText: string; turns: number };
      };
      expect(greeting).toBe('Hello, Ada!');
      expect(result).toMatchObject({
        status: 'completed',
        finalText: 'Order A-1 has shipped with DHL; it can be returned within 30 days.',
        turns: 2,
      });

      const [first, second] = model.requests;
      expect(first!.body.tools?.map((tool) => tool.name)).toEqual([
        'lookup_order',
        'policies__read_text_file',
      ]);
      expect(first!.body.tools?.[0]?.strict).toBe(true);
      const outputs = second!.body.input.filter((item) => item.type === 'function_call_output');
      expect(outputs).toHaveLength(2);
      expect(outputs[1]).toMatchObject({ call_id: 'call_policy' });
      expect(outputs[1]!.output).toContain('Shipped orders can be returned within 30 days of delivery.');
      expect(outputs[0]!.call_id).toBe('call_order');
      expect(JSON.parse(outputs[0]!.output as string)).toEqual({
        orderId: 'A-1',
        status: 'shipped',
        carrier: 'DHL',
      });
      model.assertDone();
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await model.close();
    }
  });

  it('resolves every entry point, with its types, from the installed package', async () => {
    const output = await run(process.execPath, ['dist/entry-points.js'], { cwd: project });
    expect(JSON.parse(output)).toEqual({
      defineTool: 'function',
      KeelClient: 'function',
      RunInput: true,
      ScriptedModel: true,
      agentRun: 'function',
      stateQuery: 'state',
    });
  });

  it('gives `keel worker` the prebuilt workflow bundle, and bundles anew once the code beside it changed', async () => {
    const environment = childEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      KEEL_TASK_QUEUE: `bundle-${process.pid}`,
    });
    const keel = path.join(project, 'node_modules', 'keel');
    const startWorker = async (): Promise<{ seconds: number; stderr: string; output: string }> => {
      const started = performance.now();
      const worker = new CliProcess(
        spawn(process.execPath, [path.join(keel, 'bin', 'keel.js'), 'worker'], {
          cwd: project,
          env: environment,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      try {
        await worker.waitForOutput('Keel worker on task queue');
        return {
          seconds: Math.round(performance.now() - started) / 1000,
          stderr: worker.stderr,
          output: worker.stdout + worker.stderr,
        };
      } finally {
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
    };
    const prebuilt = await startWorker();
    expect(prebuilt.stderr).not.toContain('Bundling the workflow code');
    // The SDK logs this whenever it bundles at start: the prebuilt bundle spares it.
    expect(prebuilt.output).not.toContain('Workflow bundle created');
    // A module the bundle holds, changed after the build (say, by a bare `tsc`): the bundle is stale.
    await appendFile(path.join(keel, 'dist', 'workflows', 'steps.js'), '\n// changed after the build\n');
    const bundled = await startWorker();
    expect(bundled.output).toContain('Workflow bundle created');
    expect(bundled.stderr).toContain(
      `Bundling the workflow code (about 5 s; ${path.join(keel, 'dist', 'workflows', 'steps.js')} changed since`,
    );
    timings['worker ready, prebuilt bundle'] = prebuilt.seconds;
    timings['worker ready, bundling at start'] = bundled.seconds;
  });

  it('gives the project a keel command that runs the compiled CLI', async () => {
    const help = await run('npx', ['--no-install', 'keel', '--help'], { cwd: project });
    expect(help).toContain('Usage: keel <command>');
  });
});
