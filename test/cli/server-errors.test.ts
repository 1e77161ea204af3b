import { describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';

describe('server errors keep their reason', () => {
  it('a bad --query says what the server found wrong with it', async () => {
    const environment = cliEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    });
    const { code, stdout, stderr } = await runCli(['list', '--query', 'NoSuchAttribute = "x"', '--json'], {
      env: environment,
    });
    expect(code).toBe(1);
    expect(stderr).toContain('Failed to list workflows');
    expect(stderr).toMatch(/NoSuchAttribute/u);
    expect(JSON.parse(stdout)).toMatchObject({
      error: { code: 'server-error', message: expect.stringMatching(/NoSuchAttribute/u) as unknown },
    });
  });
});
