import { describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';
import { temporaryWorkspace } from '../support/harness.js';

// With TEMPORAL_API_KEY set, Temporal's environment configuration turns TLS on by itself, and a
// server without TLS never answers the handshake: the error said only "Failed to connect before the
// deadline". The test server here is such a server (a dev server, plaintext).
describe('TEMPORAL_API_KEY against a server without TLS', () => {
  const environment = (extra: Record<string, string>) =>
    cliEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TEMPORAL_API_KEY: 'test-api-key',
      ...extra,
    });

  it('says that TLS is on because of the key, and how to connect without it', async () => {
    const cwd = await temporaryWorkspace();
    const refused = await runCli(['list'], { env: environment({}), cwd });
    expect(refused.code, refused.stderr).not.toBe(0);
    expect(refused.stderr).toContain(`Could not connect to Temporal at ${inject('temporalAddress')}`);
    expect(refused.stderr).toContain(
      'TLS is on because TEMPORAL_API_KEY is set (Temporal turns it on with an API key), and a server without TLS, such as a dev server or `keel server`, never answers it: set TEMPORAL_TLS=false',
    );
    // What it says to do works.
    const listed = await runCli(['list', '--json'], { env: environment({ TEMPORAL_TLS: 'false' }), cwd });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).not.toContain('Could not connect');
  }, 60_000);
});
