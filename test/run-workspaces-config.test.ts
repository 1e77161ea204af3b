import { describe, expect, it } from 'vitest';
import { ConfigError, workerConfigFromEnvironment } from '../src/config.js';

const withKey = { OPENAI_API_KEY: 'sk-test-key' };

/** The message of the ConfigError that reading `environment` throws. */
function refusal(environment: Record<string, string>): string {
  try {
    workerConfigFromEnvironment({ ...withKey, ...environment });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

describe('per-run workspace settings', () => {
  it('keep the one shared workspace by default', () => {
    expect(workerConfigFromEnvironment(withKey).runWorkspaces).toBeUndefined();
  });

  it('give every run its own workspace under KEEL_WORKSPACES_DIR, seeded as configured', () => {
    const base = { KEEL_WORKSPACE_MODE: 'per-run', KEEL_WORKSPACES_DIR: '/srv/keel/runs' };
    expect(workerConfigFromEnvironment({ ...withKey, ...base }).runWorkspaces).toEqual({
      root: '/srv/keel/runs',
      seed: { kind: 'empty' },
      retentionSeconds: 86_400,
      shared: false,
      failoverSeconds: 30,
    });
    expect(
      workerConfigFromEnvironment({
        ...withKey,
        ...base,
        KEEL_WORKSPACE_SEED_DIR: '/srv/seed',
        KEEL_WORKSPACE_RETENTION_SECONDS: '60',
        KEEL_WORKSPACES_SHARED: 'true',
        KEEL_WORKSPACE_FAILOVER_SECONDS: '5',
      }).runWorkspaces,
    ).toEqual({
      root: '/srv/keel/runs',
      seed: { kind: 'directory', path: '/srv/seed' },
      retentionSeconds: 60,
      shared: true,
      failoverSeconds: 5,
    });
    expect(
      workerConfigFromEnvironment({
        ...withKey,
        ...base,
        KEEL_WORKSPACE_GIT_URL: 'git@github.com:acme/app.git',
      }).runWorkspaces?.seed,
    ).toEqual({ kind: 'git', url: 'git@github.com:acme/app.git' });
  });

  it('refuse settings that make no sense together, naming them', () => {
    expect(
      refusal({
        KEEL_WORKSPACE_MODE: 'per-run',
        KEEL_WORKSPACES_DIR: '/srv/runs',
        KEEL_WORKSPACE_FAILOVER_SECONDS: '0',
      }),
    ).toMatch(/KEEL_WORKSPACE_FAILOVER_SECONDS must be a number of seconds/);
    expect(refusal({ KEEL_WORKSPACE_MODE: 'per-run' })).toMatch(/per-run needs KEEL_WORKSPACES_DIR/);
    expect(refusal({ KEEL_WORKSPACES_DIR: '/srv/runs' })).toMatch(
      /KEEL_WORKSPACES_DIR only apply to per-run workspaces: set KEEL_WORKSPACE_MODE=per-run/,
    );
    expect(
      refusal({
        KEEL_WORKSPACE_MODE: 'per-run',
        KEEL_WORKSPACES_DIR: '/srv/runs',
        KEEL_WORKSPACE: '/srv/one',
      }),
    ).toMatch(/KEEL_WORKSPACE names the one workspace all runs share/);
    expect(
      refusal({
        KEEL_WORKSPACE_MODE: 'per-run',
        KEEL_WORKSPACES_DIR: '/srv/runs',
        KEEL_WORKSPACE_SEED_DIR: '/srv/seed',
        KEEL_WORKSPACE_GIT_URL: 'https://example.com/app.git',
      }),
    ).toMatch(/set only one/);
    expect(refusal({ KEEL_WORKSPACE_MODE: 'per-run', KEEL_WORKSPACES_DIR: 'runs' })).toMatch(
      /KEEL_WORKSPACES_DIR must be an absolute path/,
    );
    expect(refusal({ KEEL_WORKSPACE_MODE: 'each' })).toMatch(
      /KEEL_WORKSPACE_MODE must be "shared" or "per-run"/,
    );
  });

  it('refuse a git URL with credentials in it without repeating them', () => {
    for (const url of [
      'https://ghp_token1234567890@github.com/acme/app.git',
      'https://user:hunter2-password@example.com/app.git',
      'ssh://git:hunter2-password@example.com/app.git',
    ]) {
      const message = refusal({
        KEEL_WORKSPACE_MODE: 'per-run',
        KEEL_WORKSPACES_DIR: '/srv/runs',
        KEEL_WORKSPACE_GIT_URL: url,
      });
      expect(message).toMatch(/KEEL_WORKSPACE_GIT_URL is refused: it has credentials in it/);
      expect(message).not.toMatch(/ghp_token|hunter2/);
    }
  });
});
