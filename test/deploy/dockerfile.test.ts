import { describe, expect, it } from 'vitest';
import { editedDeployment, loadDeployment } from './deployment.js';
import {
  devDependencyProblems,
  dockerfileProblems,
  dockerignoreProblems,
  isIgnored,
} from './dockerfile-checks.js';
import { parseDockerfile } from './dockerfile.js';

/* As in docker-compose.test.ts, each test also shows its check failing on an edited copy. */

const deployment = loadDeployment();

function withDockerfile(source: string) {
  return { ...deployment, dockerfile: parseDockerfile(source) };
}

const dockerfileSource = deployment.readFile('Dockerfile')!;

describe('Dockerfile', () => {
  it('builds, from the sources, the file the worker service runs, and runs it as a non-root user', () => {
    expect(dockerfileProblems(deployment)).toEqual([]);
    expect(dockerfileProblems(withDockerfile(dockerfileSource.replace('USER node\n', '')))).toEqual([
      'the image runs as root',
    ]);
    const renamed = editedDeployment(deployment, (compose) => {
      compose.services.keel!.command = ['node', 'dist/cli.js', 'worker'];
    });
    expect(dockerfileProblems(renamed)).toEqual([
      'keel runs "node dist/cli.js worker", the image\'s CMD is "node dist/worker.js"',
      'src/cli.ts, which would build dist/cli.js, does not exist',
    ]);
    expect(dockerfileProblems(withDockerfile(dockerfileSource.replace('COPY src ./src\n', '')))).toEqual([
      'stage build does not copy src/worker.ts from the build context',
    ]);
    expect(
      dockerfileProblems(
        withDockerfile(dockerfileSource.replace('COPY --from=build /app/package.json ./\n', '')),
      ),
    ).toEqual([
      'the image lacks /app/package.json, whose "type": "module" makes Node load dist/worker.js as ESM',
    ]);
    expect(dockerfileProblems({ ...deployment, dockerignore: [...deployment.dockerignore, 'src'] })).toEqual([
      '.dockerignore keeps src/worker.ts out of the build context',
    ]);
  });

  it('leaves development dependencies out of the runtime image', () => {
    expect(devDependencyProblems(deployment)).toEqual([]);
    expect(
      devDependencyProblems(withDockerfile(dockerfileSource.replace(' && npm prune --omit=dev', ''))),
    ).toEqual(['no RUN drops the development dependencies (npm prune --omit=dev)']);
  });

  it('keeps host build output, dependencies and secrets out of the build context', () => {
    expect(dockerignoreProblems(deployment)).toEqual([]);
    expect(dockerignoreProblems({ ...deployment, dockerignore: ['*', '!.env'] })).toEqual([
      '.dockerignore lets .env into the build context',
    ]);
  });

  it('reads .dockerignore exceptions the way Docker does: the last matching line wins', () => {
    expect(isIgnored('src/worker.ts', ['*', '!src'])).toBe(false);
    expect(isIgnored('node_modules/x/index.js', ['*', '!src'])).toBe(true);
    expect(isIgnored('dist/worker.js', ['dist'])).toBe(true);
    expect(isIgnored('src/worker.ts', ['!src', '*'])).toBe(true);
  });
});
