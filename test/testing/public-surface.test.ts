import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as testing from '../../src/testing/index.js';

const root = path.resolve(import.meta.dirname, '../..');
const entry = path.join(root, 'src/testing/index.ts');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
};

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** The specifiers a module loads at run time: type-only imports and exports vanish when compiled. */
function runtimeSpecifiers(source: ts.SourceFile): string[] {
  return source.statements.flatMap((statement) => {
    if (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true)
      return [(statement.moduleSpecifier as ts.StringLiteral).text];
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly)
      return [(statement.moduleSpecifier as ts.StringLiteral).text];
    return [];
  });
}

/** Every package `keel/testing` loads at run time, following its relative imports to their ends. */
function packagesLoadedFrom(start: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of runtimeSpecifiers(parse(file))) {
      if (specifier.startsWith('.'))
        visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
      else
        packages.add(
          specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!,
        );
    }
  };
  visit(start);
  return packages;
}

describe('keel/testing', () => {
  it('offers exactly the scripted model and its step builders at run time', () => {
    expect(Object.keys(testing).sort()).toEqual(['ScriptedModel', 'reply']);
  });

  it('loads only Node built-ins and the package’s own dependencies: no test framework, no dev dependency', () => {
    const allowed = new Set(Object.keys(manifest.dependencies ?? {}));
    const loaded = [...packagesLoadedFrom(entry)];
    expect(loaded.length).toBeGreaterThan(0);
    const foreign = loaded.filter(
      (name) => !allowed.has(name) && !builtinModules.includes(name.replace(/^node:/, '')),
    );
    expect(foreign).toEqual([]);
  });

  it('has an index that only re-exports, each export with a doc comment', () => {
    const source = parse(entry);
    for (const statement of source.statements) {
      expect(
        ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined,
        statement.getText(),
      ).toBe(true);
      const comments = ts.getLeadingCommentRanges(source.text, statement.getFullStart()) ?? [];
      const doc = comments
        .map((range) => source.text.slice(range.pos, range.end))
        .find((text) => text.startsWith('/**'));
      expect(doc, `no doc comment on: ${statement.getText()}`).toBeDefined();
    }
  });
});
