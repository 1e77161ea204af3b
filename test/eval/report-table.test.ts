import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/cli/terminal-text.js';
import { compareCase } from '../../src/eval/compare.js';
import { summarise } from '../../src/eval/report.js';
import { formatReportTable } from '../../src/eval/report-table.js';
import { transcript } from './transcripts.js';

const ESC = '\u001b';
const hostile = `${ESC}[2J${ESC}]0;pwned${ESC}\\${ESC}]52;c;ZWNobyBoaQ==\u0007\u009b31m`;

async function report() {
  return summarise([
    await compareCase(
      {
        caseId: 'refund-1',
        recorded: transcript({
          turns: [
            {
              calls: [
                ['read_file', { path: 'a.txt' }],
                ['write_file', { path: 'b.txt', text: 'x' }],
              ],
            },
            {},
          ],
          costUsd: 0.0123,
        }),
        candidate: transcript({
          turns: [
            {
              calls: [
                ['read_file', { path: 'a.txt' }],
                ['list_dir', { path: '.' }],
              ],
            },
            {},
          ],
          costUsd: 0.01,
        }),
      },
      { match: 'exact' },
    ),
    await compareCase(
      {
        caseId: 'hostile',
        recorded: transcript({ answer: 'a' }),
        candidate: transcript({
          answer: 'b',
          turns: [{ calls: [[`evil${hostile}`, { path: `x${hostile}y` }]] }, {}],
          outcome: { status: 'failed', errorType: 'KeelError.Diverged', reason: `gone ${hostile} off` },
        }),
      },
      { match: 'exact' },
    ),
    await compareCase({ caseId: 'inline', candidate: transcript({ answer: 'hi' }) }, { match: 'exact' }),
  ]);
}

describe('formatReportTable', () => {
  it('shows a row per case with answer, call diff, turns, tokens, cost and status before→after, then totals', async () => {
    const table = formatReportTable(await report(), { columns: 200 });
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^case\s+result\s+answer\s+calls\s+turns\s+tokens\s+cost\s+status$/);
    expect(lines[1]).toMatch(
      /^refund-1\s+pass\s+same\s+= read_file\(a\.txt\) ; - write_file\(b\.txt, x\) ; \+ list_dir\(\.\)\s+2→2\s+200→200\s+\$0\.0123→\$0\.0100\s+completed→completed$/,
    );
    expect(lines[2]).toMatch(/^hostile\s+FAIL\s+differs\s+.*completed→failed KeelError\.Diverged$/);
    expect(lines[3]).toMatch(/^inline\s+pass\s+—\s+\(inline\) 0 calls\s+1\s+100\s+\?\s+completed$/);
    expect(table).toContain('hostile: the answer differs');
    expect(table).toContain('3 cases: 2 passed, 1 failed; same answer 1, diverged 1');
    expect(table).toContain('turns 3→5, tokens 300→500, cost $0.0123→$0.0100');
  });

  it('passes no escape or control sequence through', async () => {
    const table = formatReportTable(await report(), { columns: 400 });
    expect(table).not.toContain(ESC);
    expect(table).not.toContain('\u0007');
    expect(table).not.toContain('\u009b');
    // eslint-disable-next-line no-control-regex -- the point is that no control character survives
    expect(table.replace(/\n/gu, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/u);
    expect(table).toContain('diverged: gone');
  });

  it('cuts every line to the width', async () => {
    for (const columns of [40, 60, 80]) {
      const table = formatReportTable(await report(), { columns });
      for (const line of table.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(columns);
      expect(table.split('\n')[1]).toMatch(/^refund-1 /);
    }
    const narrow = formatReportTable(await report(), { columns: 80 }).split('\n')[1]!;
    expect(narrow).toContain('…');
    expect(narrow).toMatch(/completed→completed$|…$/);
  });
});
