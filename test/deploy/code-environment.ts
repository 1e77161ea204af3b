import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The ways Keel's code names an environment variable it reads: `process.env.X`, `environment.X`,
 * `environment['X']` (and `envProvider['X']` in @temporalio/envconfig), a helper given the
 * environment and a name (`seconds(environment, 'X', …)`), and the keys of a variable table read
 * with `readEnvironment` (`{ KEEL_TASK_QUEUE: textOr(…) }`; only Keel's, OpenAI's and Temporal's
 * prefixes, so that other upper-case keys such as `KEYWORD_LIST:` do not count).
 */
const readPatterns = [
  /\b(?:process\.env|environment)\.([A-Z][A-Z0-9_]*)\b/g,
  /\b\w+\[\s*['"]([A-Z][A-Z0-9]*_[A-Z0-9_]*)['"]\s*\]/g,
  /\(\s*environment\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g,
  /^\s*((?:KEEL|OPENAI|TEMPORAL)_[A-Z0-9_]+)\s*:/gm,
];

/** Every `.ts`/`.js` file under a directory. */
function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(?:ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => path.join(directory, file));
}

function namesIn(source: string): string[] {
  return readPatterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!));
}

/**
 * Environment variable names the worker reads: found in `src/` by the patterns above, plus the
 * `TEMPORAL_*` names @temporalio/envconfig reads when `src/` uses it for the Temporal connection.
 */
export function environmentNamesReadByCode(root: string): Set<string> {
  const sources = sourceFiles(path.join(root, 'src')).map((file) => readFileSync(file, 'utf8'));
  const names = new Set(sources.flatMap(namesIn));
  if (sources.some((source) => source.includes("from '@temporalio/envconfig'"))) {
    const envconfig = path.dirname(
      createRequire(path.join(root, 'package.json')).resolve('@temporalio/envconfig'),
    );
    for (const file of sourceFiles(envconfig)) {
      for (const name of namesIn(readFileSync(file, 'utf8'))) {
        if (name.startsWith('TEMPORAL_')) names.add(name);
      }
    }
  }
  return names;
}
