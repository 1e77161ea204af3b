import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCase } from '../../src/eval/compare.js';
import { summarise } from '../../src/eval/report.js';
import type { EvalReport } from '../../src/eval/report.js';
import { escapeHtml, reportHtml } from '../../src/eval/report-html.js';
import { transcript } from './transcripts.js';

/** Debian's Chromium, as test/codec/web-ui.test.ts uses it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Every way out of a text node or an attribute the model could try.
const ATTACKS = [
  '</pre><script>window.__pwned = "pre"</script>',
  '</textarea></title></style><script>window.__pwned = "textarea"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  '"><svg onload=window.__pwned=1>',
  "' onmouseover='window.__pwned=2",
  'javascript:window.__pwned=3',
  '<a href="javascript:window.__pwned=4">click</a>',
  '<!-- --><base href="https://evil.example/"><link rel=stylesheet href=https://evil.example/x.css>',
  '&lt;already escaped&gt; &amp;',
];
const HOSTILE = ATTACKS.join(' ');

async function hostileReport(): Promise<EvalReport> {
  const recorded = transcript({
    runId: `run-${ATTACKS[3]}`,
    task: `Task ${HOSTILE}`,
    answer: `Recorded ${HOSTILE}`,
    turns: [
      {
        text: `Thinking ${ATTACKS[0]}`,
        calls: [
          [
            `read_file`,
            { path: ATTACKS[2], [ATTACKS[4]!]: ATTACKS[5] },
            { ok: true, output: `Output ${HOSTILE}` },
          ],
          ['write_file', { path: 'b.txt', text: ATTACKS[1] }],
        ],
      },
      { text: 'Done.' },
    ],
    costUsd: 0.02,
  });
  const candidate = transcript({
    runId: 'eval-1.hostile',
    task: `Task ${HOSTILE}`,
    answer: `Candidate ${HOSTILE}`,
    turns: [
      {
        text: `Thinking differently ${ATTACKS[6]}`,
        calls: [
          [
            `read_file`,
            { path: ATTACKS[2], [ATTACKS[4]!]: ATTACKS[5] },
            { ok: true, output: `Output ${HOSTILE}` },
          ],
          [
            'list_dir',
            `{"path": "${ATTACKS[7]!.replace(/"/gu, '\\"')}"`,
            { ok: false, error: 'not_recorded', message: `No recording ${ATTACKS[0]}` },
          ],
        ],
      },
      {},
    ],
    outcome: { status: 'failed', errorType: 'KeelError.Diverged', reason: `Diverged at ${HOSTILE}` },
  });
  return summarise([
    await compareCase(
      { caseId: 'hostile', recorded, candidate, expect: { answerMatches: '/<script>/', maxTurns: 1 } },
      { match: 'normalised' },
    ),
    await compareCase(
      { caseId: 'inline', candidate: transcript({ task: `Say hi ${ATTACKS[0]}`, answer: 'hi' }) },
      { match: 'exact' },
    ),
    await compareCase(
      { caseId: 'judged', recorded: transcript({ answer: 'a' }), candidate: transcript({ answer: 'b' }) },
      { match: () => ({ same: false, note: `judge says ${ATTACKS[2]}` }) },
    ),
  ]);
}

describe('escapeHtml', () => {
  it('escapes the five HTML specials and replaces control characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>\u0000\u001b`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;\ufffd\ufffd',
    );
  });
});

describe('reportHtml', () => {
  it('is one self-contained page: no script, nothing fetched, a CSP that forbids both', async () => {
    const html = reportHtml(await hostileReport());
    expect(html).toMatch(/^<!doctype html>/u);
    // Escaped text has no `<`: every tag is the report's own, and so is every attribute.
    const tags = new Set([...html.matchAll(/<\/?([a-z0-9!]+)/giu)].map((match) => match[1]!.toLowerCase()));
    expect([...tags].sort()).toEqual(
      [
        '!doctype',
        'a',
        'body',
        'dd',
        'div',
        'dl',
        'dt',
        'code',
        'h1',
        'h2',
        'h3',
        'head',
        'html',
        'li',
        'meta',
        'p',
        'pre',
        'section',
        'span',
        'strong',
        'style',
        'table',
        'tbody',
        'td',
        'th',
        'thead',
        'title',
        'tr',
        'ul',
      ].sort(),
    );
    const attributes = new Set(
      [...html.matchAll(/<[a-z][^>]*>/giu)].flatMap((match) =>
        match[0]
          .replace(/"[^"]*"/gu, '')
          .slice(1, -1)
          .split(/[\s=]+/u)
          .slice(1)
          .filter((name) => name !== ''),
      ),
    );
    expect([...attributes].sort()).toEqual([
      'charset',
      'class',
      'content',
      'href',
      'http-equiv',
      'id',
      'lang',
      'name',
      'title',
    ]);
    expect([...html.matchAll(/href="([^"]*)"/gu)].map((match) => match[1])).toEqual([
      '#case-1',
      '#case-2',
      '#case-3',
    ]);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`,
    );
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;window.__pwned = &quot;pre&quot;&lt;/script&gt;');
    expect(html).toContain('&amp;lt;already escaped&amp;gt; &amp;amp;');
  });

  it('shows both transcripts side by side with the diff marked', async () => {
    const html = reportHtml(await hostileReport());
    expect(html).toContain('<table class="sides">');
    expect(html).toContain('<div class="call removed"><span class="mark" title="removed">−</span>');
    expect(html).toContain('<div class="call added"><span class="mark" title="added">+</span>');
    expect(html).toContain('<div class="call kept"><span class="mark" title="kept">=</span>');
    expect(html).toContain('(an inline task: no recorded run)');
    expect(html).toMatch(/<pre class="differs">Candidate &lt;\/pre&gt;/u);
  });
});

describe('reportHtml in a browser', () => {
  let browser: Browser;
  let folder: string;

  beforeAll(async () => {
    await access(CHROMIUM).catch(() => {
      throw new Error(
        `No Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
      );
    });
    folder = await mkdtemp(path.join(tmpdir(), 'keel-eval-html-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  it('runs no script, fetches nothing and shows every hostile text literally', async () => {
    const file = path.join(folder, 'report.html');
    await writeFile(file, reportHtml(await hostileReport()));
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(file).href);
    await page.hover('body');
    const found = await page.evaluate(() => {
      const document = (
        globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }
      ).document;
      return {
        pwned: (globalThis as unknown as { __pwned?: unknown }).__pwned ?? null,
        dangerous: document.querySelectorAll(
          'script, img, svg, iframe, object, embed, link, base, textarea, [onerror], [onload], [onmouseover], a[href^="javascript"], a:not([href^="#case-"])',
        ).length,
        links: document.querySelectorAll('a').length,
      };
    });
    expect(found).toEqual({ pwned: null, dangerous: 0, links: 3 });
    expect(requests).toEqual([pathToFileURL(file).href]);
    expect(errors).toEqual([]);
    const shown = await page.locator('body').innerText();
    for (const attack of ATTACKS) expect(shown).toContain(attack);
    expect(shown).toContain(`Recorded ${HOSTILE}`);
    expect(shown).toContain(`Candidate ${HOSTILE}`);
    expect(shown).toContain(`judge says ${ATTACKS[2]}`);
    expect(await page.title()).toBe('Keel eval: 3 cases, 1 passed, 2 failed');
    await page.screenshot({ path: path.join(tmpdir(), 'keel-eval-report.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
