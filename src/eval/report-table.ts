import { cutToWidth, displayWidth, printable } from '../cli/terminal-text.js';
import type { CaseReport, Change, EvalReport, StopReason, Totals } from './report.js';

/** How the table is laid out: the terminal's width in columns (default 120). */
export interface TableOptions {
  columns?: number;
}

interface Column {
  header: string;
  /** The narrowest the column may be squeezed to. */
  min: number;
  /** The widest it grows to, however long its cells. */
  max: number;
  align: 'left' | 'right';
  cell: (entry: CaseReport) => string;
}

const TABLE_COLUMNS: readonly Column[] = [
  { header: 'case', min: 8, max: 32, align: 'left', cell: (entry) => entry.caseId },
  { header: 'result', min: 6, max: 6, align: 'left', cell: (entry) => (entry.passed ? 'pass' : 'FAIL') },
  { header: 'answer', min: 6, max: 9, align: 'left', cell: answerCell },
  { header: 'calls', min: 16, max: 200, align: 'left', cell: callsCell },
  { header: 'turns', min: 5, max: 9, align: 'right', cell: (entry) => arrow(entry.turns, String) },
  { header: 'tokens', min: 6, max: 17, align: 'right', cell: (entry) => arrow(entry.tokens, count) },
  { header: 'cost', min: 6, max: 19, align: 'right', cell: (entry) => arrow(entry.costUsd, dollars) },
  { header: 'status', min: 6, max: 40, align: 'left', cell: statusCell },
];

const GAP = '  ';

/**
 * An eval report as a terminal table: one row per case (id, pass/FAIL, answer, call diff, turns,
 * tokens, cost and status before→after), why each failed case failed, then the totals. Every text
 * from a run is sanitised (escape sequences dropped) and each line cut to `columns`.
 */
export function formatReportTable(report: EvalReport, options: TableOptions = {}): string {
  const width = Math.max(20, Math.floor(options.columns ?? 120));
  const rows = report.cases.map((entry) => TABLE_COLUMNS.map((column) => clean(column.cell(entry))));
  const widths = fitWidths(rows, width);
  const line = (cells: readonly string[]) =>
    cutToWidth(
      cells
        .map((cell, index) =>
          pad(cutToWidth(cell, widths[index]!), widths[index]!, TABLE_COLUMNS[index]!.align),
        )
        .join(GAP)
        .trimEnd(),
      width,
    );
  const lines = [line(TABLE_COLUMNS.map((column) => column.header)), ...rows.map(line)];
  const failed = report.cases.filter((entry) => !entry.passed);
  if (failed.length > 0) {
    lines.push('');
    for (const entry of failed)
      for (const failure of entry.failures.length > 0 ? entry.failures : ['failed'])
        lines.push(cutToWidth(clean(`${entry.caseId}: ${failure}`), width));
  }
  lines.push('', ...totalsLines(report).map((text) => cutToWidth(text, width)));
  return `${lines.join('\n')}\n`;
}

// Which columns give up room first when the table is too wide: the call diff, then the status, …
const SQUEEZE_ORDER = ['calls', 'status', 'case', 'tokens', 'cost', 'answer', 'turns'];

/** Column widths: each as wide as its widest cell within its bounds, squeezed in order to fit `width`. */
function fitWidths(rows: readonly string[][], width: number): number[] {
  const widths = TABLE_COLUMNS.map((column, index) =>
    Math.min(
      column.max,
      Math.max(displayWidth(column.header), ...rows.map((row) => displayWidth(row[index]!))),
    ),
  );
  let over = widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1) - width;
  for (const header of SQUEEZE_ORDER) {
    if (over <= 0) break;
    const index = TABLE_COLUMNS.findIndex((column) => column.header === header);
    const take = Math.min(over, Math.max(0, widths[index]! - TABLE_COLUMNS[index]!.min));
    widths[index]! -= take;
    over -= take;
  }
  // Still too wide: the line is cut at the terminal's edge, the rightmost columns first.
  return widths;
}

function totalsLines(report: EvalReport): string[] {
  const { totals } = report;
  return [
    `${totals.cases} ${totals.cases === 1 ? 'case' : 'cases'}: ${totals.passed} passed, ${totals.failed} failed; ` +
      `same answer ${totals.sameAnswer}, diverged ${totals.diverged}`,
    `turns ${sumArrow(totals.turns, String)}, tokens ${sumArrow(totals.tokens, count)}, cost ${sumArrow(totals.costUsd, dollars)}`,
  ];
}

function answerCell(entry: CaseReport): string {
  if (entry.answer.error !== undefined) return 'error';
  if (entry.answer.same === null) return '—';
  return entry.answer.same ? 'same' : 'differs';
}

function callsCell(entry: CaseReport): string {
  if (entry.calls === null) {
    const made = entry.candidate.turns.reduce((sum, turn) => sum + turn.calls.length, 0);
    return `(inline) ${made} ${made === 1 ? 'call' : 'calls'}`;
  }
  if (entry.calls.same) return entry.calls.kept === 0 ? 'none' : `same (${entry.calls.kept})`;
  return entry.calls.compact;
}

function statusCell(entry: CaseReport): string {
  const after = stopText(entry.stop.after);
  return entry.stop.before === null ? after : `${stopText(entry.stop.before)}→${after}`;
}

function stopText(stop: StopReason): string {
  return stop.errorType === undefined ? stop.status : `${stop.status} ${stop.errorType}`;
}

function arrow(value: Change, format: (value: number) => string): string {
  const after = value.after === null ? '?' : format(value.after);
  return value.before === null ? after : `${format(value.before)}→${after}`;
}

function sumArrow(value: Totals, format: (value: number) => string): string {
  return `${value.before === null ? '?' : format(value.before)}→${value.after === null ? '?' : format(value.after)}`;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** Dollars with enough digits that a cent's fraction shows: `$0.0123`. */
export function dollars(value: number): string {
  return `$${value >= 1 ? value.toFixed(2) : value.toFixed(4)}`;
}

function clean(text: string): string {
  return printable(text, { singleLine: true });
}

function pad(text: string, width: number, align: 'left' | 'right'): string {
  const space = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'left' ? text + space : space + text;
}
