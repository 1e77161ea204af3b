import type { RunTranscript, TranscriptCall, TranscriptTurn } from './recorded-run.js';
import type { CallDiffEntry } from './call-diff.js';
import { dollars } from './report-table.js';
import type { CaseReport, Change, EvalReport, StopReason } from './report.js';
import { REPORT_CSS } from './report-html-style.js';

// Nothing is fetched and nothing runs: no script, no image, no form, no base; inline styles only.
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'";

/** The longest stretch of one text the report shows; the rest is counted, not shown. */
const BLOCK_LIMIT = 20_000;

// Control characters other than tab, newline and carriage return are not allowed in HTML text.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/gu;

/** `text` safe anywhere in HTML: as element text and inside a quoted attribute. */
export function escapeHtml(text: string): string {
  return text
    .replace(CONTROLS, '\ufffd')
    .replace(/&/gu, '&amp;')
    .replace(/</gu, '&lt;')
    .replace(/>/gu, '&gt;')
    .replace(/"/gu, '&quot;')
    .replace(/'/gu, '&#39;');
}

/**
 * An eval report as one self-contained HTML page: totals, a summary table, and per case its
 * findings and a side-by-side transcript (recorded | candidate) with added, removed and differing
 * parts highlighted. Every text from a run is escaped; the page has no script and its
 * Content-Security-Policy forbids any, and fetches nothing.
 */
export function reportHtml(report: EvalReport): string {
  const { totals } = report;
  const title = `Keel eval: ${totals.cases} cases, ${totals.passed} passed, ${totals.failed} failed`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<h1>Keel eval report</h1>
<p>${totals.cases} cases: <strong>${totals.passed} passed</strong>, <strong>${totals.failed} failed</strong>;
same answer ${totals.sameAnswer}, diverged ${totals.diverged}.
Turns ${sum(totals.turns, String)}, tokens ${sum(totals.tokens, count)}, cost ${sum(totals.costUsd, dollars)} (recorded → candidate).</p>
${summaryTable(report)}
<p class="legend"><span class="call added">+ only the candidate</span><span class="call removed">− only the recorded run</span><span class="differs">differs between the two</span></p>
${report.cases.map((entry, index) => caseSection(entry, index)).join('\n')}
</body>
</html>
`;
}

function summaryTable(report: EvalReport): string {
  const rows = report.cases.map(
    (entry, index) => `<tr>
<td><a href="#case-${index + 1}">${text(entry.caseId)}</a></td>
<td>${badge(entry.passed)}</td>
<td>${text(answerWord(entry))}</td>
<td><code>${text(callsSummary(entry))}</code></td>
<td class="number">${text(arrow(entry.turns, String))}</td>
<td class="number">${text(arrow(entry.tokens, count))}</td>
<td class="number">${text(arrow(entry.costUsd, dollars))}</td>
<td>${text(stopArrow(entry))}</td>
</tr>`,
  );
  return `<table class="summary">
<thead><tr><th>case</th><th>result</th><th>answer</th><th>calls (= kept, − removed, + added)</th><th>turns</th><th>tokens</th><th>cost</th><th>status</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function caseSection(entry: CaseReport, index: number): string {
  const failures =
    entry.failures.length === 0
      ? ''
      : `<ul class="failures">${entry.failures.map((failure) => `<li>${text(failure)}</li>`).join('')}</ul>`;
  const facts: [string, string][] = [
    ['task', `<pre>${block(entry.task)}</pre>`],
    [
      'answer',
      `${text(answerWord(entry))} <span class="muted">(${text(entry.answer.match)})</span>` +
        (entry.answer.note === undefined ? '' : ` — ${text(entry.answer.note)}`) +
        (entry.answer.error === undefined
          ? ''
          : ` <span class="answer-error">${text(entry.answer.error)}</span>`),
    ],
    ['calls', `<code>${text(entry.calls === null ? callsSummary(entry) : entry.calls.compact)}</code>`],
    ['turns', text(arrow(entry.turns, String))],
    ['tokens', text(arrow(entry.tokens, count))],
    ['cost', text(arrow(entry.costUsd, dollars))],
    ['status', text(stopArrow(entry))],
    ['divergence', text(divergenceWords(entry))],
  ];
  const assertions =
    entry.assertions.length === 0
      ? ''
      : `<table class="assertions"><thead><tr><th>assertion</th><th>result</th><th>found</th></tr></thead><tbody>${entry.assertions
          .map(
            (result) =>
              `<tr><td>${text(result.assertion)}</td><td>${text(result.result)}</td><td>${text(result.detail)}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  return `<section class="case ${entry.passed ? 'pass' : 'fail'}" id="case-${index + 1}">
<h2>${text(entry.caseId)} ${badge(entry.passed)}</h2>
${failures}
<dl class="facts">${facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('')}</dl>
${assertions}
${sideBySide(entry)}
</section>`;
}

/** The two transcripts, turn by turn in rows, recorded on the left; calls marked by the diff. */
function sideBySide(entry: CaseReport): string {
  const { recorded, candidate } = entry;
  const changes = changeIndex(entry.calls?.entries ?? []);
  const rows: string[] = [];
  const head = (label: string, transcript: RunTranscript | null) =>
    transcript === null
      ? `<th>${label} <span class="muted">(an inline task: no recorded run)</span></th>`
      : `<th>${label} <code>${text(transcript.runId)}</code></th>`;
  rows.push(`<tr>${head('recorded', recorded)}${head('candidate', candidate)}</tr>`);
  const turnCount = Math.max(recorded?.turns.length ?? 0, candidate.turns.length);
  const offsets = { recorded: callOffsets(recorded), candidate: callOffsets(candidate) };
  for (let index = 0; index < turnCount; index++) {
    const before = recorded?.turns[index];
    const after = candidate.turns[index];
    const textDiffers = recorded !== null && (before?.text ?? null) !== (after?.text ?? null);
    rows.push(
      `<tr><td>${recorded === null ? '' : turnCell(before, textDiffers, 'recorded', offsets.recorded[index] ?? 0, changes)}</td>` +
        `<td>${turnCell(after, textDiffers, 'candidate', offsets.candidate[index] ?? 0, changes)}</td></tr>`,
    );
  }
  const answerDiffers = entry.answer.same === false;
  rows.push(
    `<tr><td>${recorded === null ? '' : outcomeCell(recorded, answerDiffers)}</td><td>${outcomeCell(candidate, answerDiffers)}</td></tr>`,
  );
  return `<table class="sides">\n${rows.join('\n')}\n</table>`;
}

function turnCell(
  turn: TranscriptTurn | undefined,
  differs: boolean,
  side: 'recorded' | 'candidate',
  firstCall: number,
  changes: Map<string, CallDiffEntry['change']>,
): string {
  if (turn === undefined) return '<span class="muted">(no such turn)</span>';
  const head = `<div class="turn-head">turn ${turn.turn} · ${text(turn.model)} · ${count(turn.usage.totalTokens)} tokens</div>`;
  const body = turn.text === '' ? '' : `<pre class="${differs ? 'differs' : ''}">${block(turn.text)}</pre>`;
  const calls = turn.calls
    .map((call, offset) => callBlock(call, changes.get(`${side}:${firstCall + offset}`)))
    .join('');
  return head + body + calls;
}

const MARKS = { kept: '=', removed: '−', added: '+' } as const;

function callBlock(call: TranscriptCall, change: CallDiffEntry['change'] | undefined): string {
  const mark = change === undefined ? '' : `<span class="mark" title="${change}">${MARKS[change]}</span>`;
  const answer =
    call.answer === undefined
      ? '<span class="muted">(no answer)</span>'
      : call.answer.ok
        ? `<pre>${block(call.answer.output)}</pre>`
        : `<pre><strong>${text(call.answer.error)}</strong>: ${block(call.answer.message)}</pre>`;
  return `<div class="call ${change ?? ''}">${mark}<code><strong>${text(call.name)}</strong></code>
<pre>${block(prettyArguments(call.argumentsJson))}</pre>→ ${answer}</div>`;
}

function outcomeCell(transcript: RunTranscript, answerDiffers: boolean): string {
  const { outcome } = transcript;
  const reason = outcome.reason === undefined ? '' : `<div>${text(outcome.reason)}</div>`;
  const stop = outcome.errorType === undefined ? outcome.status : `${outcome.status} (${outcome.errorType})`;
  return (
    `<div class="turn-head">outcome</div><h3>${text(stop)}</h3>${reason}` +
    `<pre class="${answerDiffers ? 'differs' : ''}">${block(outcome.text)}</pre>`
  );
}

/** Where each turn's calls start in the run's flat call list (the diff's indices). */
function callOffsets(transcript: RunTranscript | null): number[] {
  const offsets: number[] = [];
  let next = 0;
  for (const turn of transcript?.turns ?? []) {
    offsets.push(next);
    next += turn.calls.length;
  }
  return offsets;
}

function changeIndex(entries: readonly CallDiffEntry[]): Map<string, CallDiffEntry['change']> {
  const index = new Map<string, CallDiffEntry['change']>();
  for (const entry of entries) {
    if (entry.recordedIndex !== undefined) index.set(`recorded:${entry.recordedIndex}`, entry.change);
    if (entry.candidateIndex !== undefined) index.set(`candidate:${entry.candidateIndex}`, entry.change);
  }
  return index;
}

function prettyArguments(argumentsJson: string): string {
  try {
    return JSON.stringify(JSON.parse(argumentsJson), null, 2);
  } catch {
    return argumentsJson;
  }
}

function text(value: string): string {
  return escapeHtml(value);
}

/** A long text escaped, cut to {@link BLOCK_LIMIT} characters with a note of how much was left out. */
function block(value: string): string {
  if (value.length <= BLOCK_LIMIT) return escapeHtml(value);
  return `${escapeHtml(value.slice(0, BLOCK_LIMIT))}<span class="muted">… (${count(value.length - BLOCK_LIMIT)} more characters)</span>`;
}

function badge(passed: boolean): string {
  return passed ? '<span class="badge pass">PASS</span>' : '<span class="badge fail">FAIL</span>';
}

function answerWord(entry: CaseReport): string {
  if (entry.answer.error !== undefined) return 'not compared';
  if (entry.answer.same === null) return '— (inline task)';
  return entry.answer.same ? 'same' : 'differs';
}

function callsSummary(entry: CaseReport): string {
  if (entry.calls === null) {
    const made = entry.candidate.turns.reduce((total, turn) => total + turn.calls.length, 0);
    return `${made} ${made === 1 ? 'call' : 'calls'}`;
  }
  const { kept, removed, added } = entry.calls;
  if (entry.calls.same) return kept === 0 ? 'no calls' : `same (${kept})`;
  return `=${kept} −${removed} +${added}`;
}

function divergenceWords(entry: CaseReport): string {
  const { divergence } = entry;
  const refused = `${divergence.refusedCalls} unmatched ${divergence.refusedCalls === 1 ? 'call' : 'calls'} refused`;
  if (!divergence.diverged) return `did not diverge; ${refused}`;
  const where = divergence.atTurn === undefined ? '' : ` in turn ${divergence.atTurn}`;
  return `diverged${where}${divergence.reason === undefined ? '' : `: ${divergence.reason}`}; ${refused}`;
}

function stopArrow(entry: CaseReport): string {
  const after = stopText(entry.stop.after);
  return entry.stop.before === null ? after : `${stopText(entry.stop.before)} → ${after}`;
}

function stopText(stop: StopReason): string {
  return stop.errorType === undefined ? stop.status : `${stop.status} (${stop.errorType})`;
}

function arrow(value: Change, format: (value: number) => string): string {
  const after = value.after === null ? '?' : format(value.after);
  return value.before === null ? after : `${format(value.before)} → ${after}`;
}

function sum(
  value: { before: number | null; after: number | null },
  format: (value: number) => string,
): string {
  return `${value.before === null ? '?' : format(value.before)} → ${value.after === null ? '?' : format(value.after)}`;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}
