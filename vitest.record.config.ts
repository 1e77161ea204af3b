import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run record-histories`: the recorder only, with the same server and bundle set-up as the tests. */
export default defineConfig({ test: { ...base.test, include: ['scripts/record-histories.ts'] } });
