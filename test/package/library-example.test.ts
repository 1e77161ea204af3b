import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleDirectory, repositoryRoot } from './packed-project.js';

/** The page that shows the library example: Keel added to a worker a team already runs. */
const page = path.join(repositoryRoot, 'docs', 'library.md');

/** The page's code blocks that name an example file: ```ts examples/library/worker.ts */
async function libraryExamples(): Promise<Map<string, string>> {
  const readme = await readFile(page, 'utf8');
  const blocks = new Map<string, string>();
  for (const match of readme.matchAll(/^```\w+ (examples\/\S+)\n([\s\S]*?)^```$/gm)) {
    const [, file, body] = match;
    if (blocks.has(file!)) throw new Error(`docs/library.md shows ${file} twice`);
    blocks.set(file!, body!);
  }
  return blocks;
}

describe('the library example in docs/library.md', () => {
  it('is, block by block, the example program the packed-package test compiles and runs', async () => {
    const blocks = await libraryExamples();
    const sources = (await readdir(exampleDirectory)).filter((file) => file.endsWith('.ts')).sort();
    const relative = (file: string) => path.posix.join('examples', 'library', file);
    expect([...blocks.keys()].sort()).toEqual(sources.map(relative));
    for (const file of sources) {
      expect(blocks.get(relative(file)), relative(file)).toBe(
        await readFile(path.join(exampleDirectory, file), 'utf8'),
      );
    }
  });

  it("installs exactly the example project's dependencies", async () => {
    const readme = await readFile(page, 'utf8');
    const { dependencies } = JSON.parse(
      await readFile(path.join(exampleDirectory, 'package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>;
    };
    expect(readme).toContain(`npm install ${Object.keys(dependencies).sort().join(' ')}\n`);
  });
});
