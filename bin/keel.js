#!/usr/bin/env node
// The `keel` command. It runs the TypeScript source through tsx, so it works right after
// `npm install` with no build step; a production image runs the compiled `node dist/cli/keel.js`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/keel.ts');
