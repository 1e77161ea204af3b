/**
 * Prints what the prebuilt workflow bundle (dist/workflow-bundle.js, `npm run build`) is made of:
 * its code and inline source map in bytes, then the code by package (zod's core and classic apart,
 * Keel's own folders apart) and the largest modules. Run with `tsx scripts/workflow-bundle-composition.ts
 * [bundle] [modules to list]`. Every cached run evaluates its own copy of each module (see BENCHMARKS.md),
 * so what the workflow imports costs memory per run, not once per worker.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const [bundlePath = path.resolve(import.meta.dirname, '../dist/workflow-bundle.js'), listed = '15'] =
  process.argv.slice(2);

const text = await readFile(bundlePath, 'utf8');
const mapStart = text.lastIndexOf('//# sourceMappingURL=');
const code = mapStart > 0 ? text.slice(0, mapStart) : text;
// webpack (development mode, as the Temporal bundler runs it) opens every module with this line.
const starts = [...code.matchAll(/\n\/\*\*\*\/ "(\.\/[^"]+)"\n/g)].map((match) => ({
  at: match.index,
  name: match[1]!,
}));
const modules = starts.map((start, index) => ({
  name: start.name,
  bytes: (starts[index + 1]?.at ?? code.length) - start.at,
}));

/** The package a module belongs to (`zod/v4/core`, `@temporalio/workflow`), or its folder for Keel's own. */
function group(name: string): string {
  const inPackage = /^\.\/node_modules\/((?:@[^/]+\/)?[^/]+)(\/v4\/[a-z]+)?/.exec(name);
  if (inPackage) return `${inPackage[1]}${inPackage[2] ?? ''}`;
  return path.dirname(name);
}

const groups = new Map<string, number>();
for (const module of modules)
  groups.set(group(module.name), (groups.get(group(module.name)) ?? 0) + module.bytes);
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1).padStart(8)} KiB`;

console.log(
  `${bundlePath}: ${text.length} bytes = code ${code.length} + inline source map ${text.length - code.length}`,
);
console.log(`${modules.length} modules`);
for (const [name, bytes] of [...groups].sort((a, b) => b[1] - a[1])) {
  console.log(`${kib(bytes)}  ${((100 * bytes) / code.length).toFixed(1).padStart(5)}%  ${name}`);
}
console.log('largest modules:');
for (const module of [...modules].sort((a, b) => b.bytes - a.bytes).slice(0, Number(listed))) {
  console.log(`${kib(module.bytes)}  ${module.name}`);
}
