import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from './packed-project.js';

/** Code blocks in docs/ that name an example file (```ts examples/tools/refund.ts), by page. */
async function namedBlocks(): Promise<Array<{ page: string; file: string; body: string }>> {
  const pages = (await readdir(path.join(repositoryRoot, 'docs'))).filter((page) => page.endsWith('.md'));
  const blocks = [];
  for (const page of pages) {
    const text = await readFile(path.join(repositoryRoot, 'docs', page), 'utf8');
    for (const [, file, body] of text.matchAll(/^```\w+ (examples\/\S+)\n([\s\S]*?)^```$/gm)) {
      blocks.push({ page, file: file!, body: body! });
    }
  }
  return blocks;
}

describe('the examples in docs/', () => {
  it('are the example files, which the typecheck and the linter cover, byte for byte', async () => {
    const blocks = await namedBlocks();
    expect(blocks.map((block) => block.file)).toEqual(
      expect.arrayContaining([
        'examples/tools/lookup-order.ts',
        'examples/tools/my-tools.ts',
        'examples/tools/refund.ts',
      ]),
    );
    for (const { page, file, body } of blocks) {
      expect(body, `docs/${page} shows ${file}`).toBe(
        await readFile(path.join(repositoryRoot, file), 'utf8'),
      );
    }
  });

  it('show every example file under examples/tools', async () => {
    const shown = new Set((await namedBlocks()).map((block) => block.file));
    const files = await readdir(path.join(repositoryRoot, 'examples', 'tools'));
    expect(files.map((file) => `examples/tools/${file}`).filter((file) => !shown.has(file))).toEqual([]);
  });
});
