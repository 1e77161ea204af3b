import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repository = fileURLToPath(new URL('../../../', import.meta.url));
const source = path.join(repository, 'src');

/**
 * Compiles the worker process of the process fixtures (worker-main.ts and its test tools) to one
 * JavaScript file inside the built package's copy, its imports of `src/` pointing at that copy's
 * `dist/`: a worker process then starts on plain Node, as the built worker does, instead of
 * compiling TypeScript through tsx at every start (tests start dozens). Returns the file's path.
 */
export async function compileProcessWorker(builtRoot: string): Promise<string> {
  const outfile = path.join(builtRoot, 'test-worker', 'worker-main.js');
  await build({
    entryPoints: [fileURLToPath(new URL('./worker-main.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
    plugins: [
      {
        name: 'src-from-dist',
        setup(context) {
          context.onResolve({ filter: /\/src\// }, (args) => {
            const resolved = path.resolve(args.resolveDir, args.path);
            if (!resolved.startsWith(source + path.sep)) return undefined;
            const relativePath = path.relative(source, resolved).replace(/\.ts$/u, '.js');
            return { path: pathToFileURL(path.join(builtRoot, 'dist', relativePath)).href, external: true };
          });
        },
      },
    ],
  });
  return outfile;
}
