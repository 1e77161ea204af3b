import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const fromSource = import.meta.url.endsWith('.ts');

/**
 * The workflow interceptor modules every Keel workflow bundle holds (the prebuilt one, one bundled at
 * start, the tests' and the replayer's): OpenTelemetry's, which carries the trace from the client
 * through the workflow to its activities (the stream's handlers left out), and Keel's run span. They are in the bundle whether tracing
 * is on or not, so a bundle never depends on a setting and replay always runs the same code; with
 * tracing off their spans go to a sink that drops them.
 */
export const workflowInterceptorModules: readonly string[] = [
  path.join(here, fromSource ? 'trace-interceptors.ts' : 'trace-interceptors.js'),
  path.join(here, fromSource ? 'run-span-interceptor.ts' : 'run-span-interceptor.js'),
];
