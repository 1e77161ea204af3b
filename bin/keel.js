#!/usr/bin/env node
// The `keel` command. In a checkout of the repository it runs the compiled dist/ when `npm run build`
// made it from the source as it is now, and otherwise the TypeScript source through tsx, so it works
// right after `npm install` with no build step and never runs stale code; the package ships no src/,
// so installed from npm it runs dist/ (`node dist/cli/keel.js`; the Docker image runs the worker,
// `node dist/worker.js`).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = join(root, 'src');

/** Whether dist/ is the build of src/ as it is: `npm run build` writes the workflow bundle last. */
function distIsCurrent() {
  let built;
  try {
    built = statSync(join(root, 'dist', 'workflow-bundle.js')).mtimeMs;
  } catch {
    return false;
  }
  const inputs = [join(root, 'package.json'), join(root, 'tsconfig.json')];
  for (const entry of readdirSync(source, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) inputs.push(join(entry.parentPath ?? entry.path, entry.name));
  return inputs.every((file) => statSync(file, { throwIfNoEntry: false })?.mtimeMs <= built);
}

if (existsSync(source) && !distIsCurrent()) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/keel.ts', import.meta.url).href);
} else {
  await import('../dist/cli/keel.js');
}
