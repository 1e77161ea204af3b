/**
 * Extracts the request schema of `POST /responses` (the request body and every schema it references)
 * from a published OpenAPI document into test/fixtures, so tests can check every request Keel sends
 * against it (test/support/responses-schema.ts). Two documents are vendored:
 *
 * - OpenAI's (`CreateResponse`), into test/fixtures/openai/create-response.schema.json:
 *     git clone https://github.com/openai/openai-openapi /tmp/openai-openapi
 *     npx tsx scripts/vendor-openai-schema.ts /tmp/openai-openapi [commit]
 * - Open Responses' (`CreateResponseBody`), into test/fixtures/openresponses/create-response.schema.json:
 *     git clone https://github.com/openresponses/openresponses /tmp/openresponses
 *     npx tsx scripts/vendor-openai-schema.ts --open-responses /tmp/openresponses [commit]
 *   or, from a copy of its public/openapi/openapi.json taken at a known commit:
 *     npx tsx scripts/vendor-openai-schema.ts --open-responses-file <openapi.json> <commit>
 *
 * The document is read from the git repository at `commit` (HEAD when absent), so the header of the
 * vendored file names exactly what it came from. Only validation keywords are kept (descriptions and
 * examples are dropped), `#/components/schemas/X` becomes `#/$defs/X`, and the 2019-09
 * `$recursiveRef` the document uses for nested filters becomes a plain `$ref`, so the result is a
 * self-contained JSON Schema 2020-12 document (OpenAPI 3.1's dialect).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';

interface Source {
  name: string;
  repository: string;
  file: string;
  root: string;
  /** Kept besides the request body: the response and its streamed events, for servers to be checked. */
  responses: boolean;
  target: string;
}
const OPENAI: Source = {
  name: "OpenAI's",
  repository: 'https://github.com/openai/openai-openapi',
  file: 'openapi.json',
  root: 'CreateResponse',
  responses: false,
  target: 'openai/create-response.schema.json',
};
const OPEN_RESPONSES: Source = {
  name: "Open Responses'",
  repository: 'https://github.com/openresponses/openresponses',
  file: 'public/openapi/openapi.json',
  root: 'CreateResponseBody',
  responses: true,
  target: 'openresponses/create-response.schema.json',
};

const usage =
  'usage: tsx scripts/vendor-openai-schema.ts [--open-responses] <git repository> [commit]\n' +
  '       tsx scripts/vendor-openai-schema.ts --open-responses-file <openapi.json> <commit>';
const args = process.argv.slice(2);
const flag = args[0]?.startsWith('--') === true ? args.shift() : undefined;
const [location, commitArgument] = args;
if (
  location === undefined ||
  (flag !== undefined && !['--open-responses', '--open-responses-file'].includes(flag))
) {
  console.error(usage);
  process.exit(2);
}
const source = flag === undefined ? OPENAI : OPEN_RESPONSES;
const target = path.resolve(import.meta.dirname, '../test/fixtures', source.target);
const ROOT = source.root;
/** Keywords that only document; everything else constrains and is kept. */
const DOCUMENTATION = new Set(['description', 'example', 'examples', 'title', 'deprecated', 'default']);

const git = (...gitArgs: string[]): string =>
  execFileSync('git', ['-C', location, ...gitArgs], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
let commit: string;
let committedAt: string | undefined;
let text: string;
if (flag === '--open-responses-file') {
  if (commitArgument === undefined || !/^[0-9a-f]{40}$/u.test(commitArgument)) {
    console.error(`${usage}\n(the commit the copy was taken at, 40 hex digits)`);
    process.exit(2);
  }
  commit = commitArgument;
  text = readFileSync(location, 'utf8');
} else {
  commit = git('rev-parse', `${commitArgument ?? 'HEAD'}^{commit}`).trim();
  committedAt = git('log', '-1', '--format=%cI', commit).trim();
  text = git('show', `${commit}:${source.file}`);
}
const document = JSON.parse(text) as {
  openapi: string;
  info: { version: string };
  components: { schemas: Record<string, unknown> };
};
const schemas = document.components.schemas;

const definitions: Record<string, unknown> = {};
const pending = [ROOT];
if (source.responses) {
  // What POST /responses answers: `ResponseResource` as JSON, and one of its events per SSE message,
  // kept as the `StreamingEvent` union.
  const answers = (
    document as unknown as {
      paths: Record<
        string,
        { post: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }
      >;
    }
  ).paths['/responses']!.post.responses['200']!.content;
  pending.push('ResponseResource');
  definitions.StreamingEvent = clean(answers['text/event-stream']!.schema, 'StreamingEvent');
}
for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
  if (name in definitions) continue;
  const schema = schemas[name];
  if (schema === undefined) throw new Error(`${name} is referenced but not defined in the document`);
  definitions[name] = clean(schema, name);
}

/** The schema without documentation keywords, its references rewritten (and queued for extraction). */
function clean(value: unknown, owner: string, inProperties = false): unknown {
  if (Array.isArray(value)) return value.map((item) => clean(item, owner));
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    // Under `properties` the keys are field names (a field may be called `description`), not keywords.
    if (!inProperties && (DOCUMENTATION.has(key) || key.startsWith('x-') || key === '$recursiveAnchor'))
      continue;
    if (!inProperties && key === '$ref' && typeof child === 'string') {
      const referenced = /^#\/components\/schemas\/(.+)$/.exec(child)?.[1];
      if (referenced === undefined) throw new Error(`unsupported reference ${child} in ${owner}`);
      pending.push(referenced);
      result.$ref = `#/$defs/${referenced}`;
    } else if (!inProperties && key === '$recursiveRef') {
      // Only used as `#` inside the schema that sets `$recursiveAnchor`: a reference to that schema.
      if (child !== '#') throw new Error(`unsupported $recursiveRef ${String(child)} in ${owner}`);
      result.$ref = `#/$defs/${owner}`;
    } else {
      result[key] = clean(child, owner, !inProperties && key === 'properties');
    }
  }
  return result;
}

const sorted = Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b)));
const vendored = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $comment:
    `Generated by scripts/vendor-openai-schema.ts; do not edit. The request body of POST /responses ` +
    `(${ROOT} and what it references${source.responses ? '; its answer, ResponseResource, and each event of its stream, StreamingEvent' : ''}) ` +
    `from ${source.name} published OpenAPI document.`,
  'x-source': {
    repository: source.repository,
    file: source.file,
    commit,
    ...(committedAt !== undefined ? { committedAt } : {}),
    openapi: document.openapi,
    apiVersion: document.info.version,
    extractedAt: new Date().toISOString().slice(0, 10),
  },
  $ref: `#/$defs/${ROOT}`,
  $defs: sorted,
};

await mkdir(path.dirname(target), { recursive: true });
const formatted = await format(JSON.stringify(vendored), {
  ...(await resolveConfig(target)),
  filepath: target,
});
await writeFile(target, formatted);
console.log(
  `wrote ${path.relative(process.cwd(), target)}: ${Object.keys(sorted).length} schemas from ${commit}`,
);
