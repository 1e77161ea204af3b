#!/usr/bin/env node
// The `keel` command. In a checkout of the repository it runs the TypeScript source through tsx, so it
// works right after `npm install` with no build step; the package ships no src/, so installed from npm
// it runs the compiled dist/ (`node dist/cli/keel.js`; the Docker image runs the worker, `node dist/worker.js`).
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const source = new URL('../src/cli/keel.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/keel.js');
}
