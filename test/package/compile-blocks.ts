/**
 * Compiles the docs' `ts` blocks with the repository's strict settings (tsconfig.check.json), each as
 * a module of its own beside the source, with `keel` meaning src/ as for the examples. A fragment may
 * use what the package exports without importing it (the import is added), and a
 * `<!-- compiled with: … -->` comment before the block gives it the declarations it assumes.
 */
import path from 'node:path';
import ts from 'typescript';
import type { DocBlock } from './doc-blocks.js';
import { where } from './doc-blocks.js';
import { repositoryRoot } from './packed-project.js';

/** The entry points a fragment may use unimported, in the order names are looked up. */
const ENTRY_POINTS: Array<[specifier: string, source: string]> = [
  ['keel', 'src/index.ts'],
  ['keel/client', 'src/client.ts'],
];

function compilerOptions(): ts.CompilerOptions {
  const configPath = path.join(repositoryRoot, 'tsconfig.check.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error('tsconfig.check.json could not be read');
  return { ...parsed.options, noEmit: true };
}

interface Source {
  block: DocBlock;
  fileName: string;
  prelude: string[];
  text(): string;
}

function programOf(sources: Source[], options: ts.CompilerOptions, old?: ts.Program): ts.Program {
  const host = ts.createCompilerHost(options);
  const byName = new Map(sources.map((source) => [source.fileName, source]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) => {
    const source = byName.get(fileName);
    return source
      ? ts.createSourceFile(fileName, source.text(), language)
      : getSourceFile(fileName, language, ...rest);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => byName.has(fileName) || fileExists(fileName);
  return ts.createProgram({
    rootNames: [...byName.keys()],
    options,
    host,
    ...(old ? { oldProgram: old } : {}),
  });
}

/** The names an entry point exports, from the compiled program. */
function exportsOf(program: ts.Program, source: string): Set<string> {
  const file = program.getSourceFile(path.join(repositoryRoot, source));
  const symbol = file && program.getTypeChecker().getSymbolAtLocation(file);
  return new Set(
    symbol
      ? program
          .getTypeChecker()
          .getExportsOfModule(symbol)
          .map((s) => s.name)
      : [],
  );
}

/** Type errors of every block, as `page:line: message`; [] when all compile. */
export function compileBlocks(blocks: DocBlock[]): string[] {
  const options = compilerOptions();
  const sources: Source[] = blocks.map((block) => {
    const slug = `${block.page.replace(/[^\w]+/g, '-')}-${block.line}`;
    const declared = /^compiled with: (.*)$/.exec(block.marker ?? '')?.[1];
    const source: Source = {
      block,
      fileName: path.join(repositoryRoot, 'docs', `.block-${slug}.ts`),
      prelude: declared ? declared.split(/(?<=;)\s+/) : [],
      text: () => source.prelude.map((line) => `${line}\n`).join('') + `${block.body}\nexport {};\n`,
    };
    return source;
  });
  let program = programOf(sources, options);
  const entryExports = ENTRY_POINTS.map(
    ([specifier, file]) => [specifier, exportsOf(program, file)] as const,
  );
  // A fragment that uses an exported name without importing it gets the import it implies.
  for (const source of sources) {
    const missing = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(source.fileName))
      .filter((diagnostic) => diagnostic.code === 2304)
      .map((diagnostic) => /'(\w+)'/.exec(ts.flattenDiagnosticMessageText(diagnostic.messageText, ''))?.[1]);
    for (const name of new Set(missing)) {
      const from = entryExports.find(([, names]) => name !== undefined && names.has(name))?.[0];
      if (from !== undefined) source.prelude.unshift(`import { ${name} } from '${from}';`);
    }
  }
  program = programOf(sources, options, program);
  return sources.flatMap((source) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(source.fileName)).map((diagnostic) => {
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const offset = line - source.prelude.length; // the block's own 0-based line, negative in the prelude
      const at = where(source.block.page, source.block.line + 1 + Math.max(offset, 0));
      return `${at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    }),
  );
}
