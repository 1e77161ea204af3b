/** The report's stylesheet, inlined so the file opens anywhere with nothing fetched. */
export const REPORT_CSS = `
:root { color-scheme: light dark; --pass: #1a7f37; --fail: #cf222e; --kept: transparent;
  --added: rgba(46,160,67,.16); --removed: rgba(248,81,73,.16); --differs: rgba(212,167,44,.2);
  --line: rgba(128,128,128,.35); }
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1400px; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
h3 { font-size: 1rem; margin: 0; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: rgba(128,128,128,.1); }
td.number { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; font: 12.5px/1.4 ui-monospace, monospace; }
code { font: 12.5px ui-monospace, monospace; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; color: #fff; font-size: .8rem; font-weight: 600; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); }
.case { border: 1px solid var(--line); border-radius: .4rem; padding: 1rem; margin: 1.5rem 0; }
.case.fail { border-left: 4px solid var(--fail); } .case.pass { border-left: 4px solid var(--pass); }
.failures { color: var(--fail); margin: .25rem 0 .75rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 1rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
table.sides { table-layout: fixed; } table.sides td { width: 50%; }
.turn-head { font-size: .85rem; opacity: .75; }
.call { border: 1px solid var(--line); border-radius: .3rem; padding: .25rem .5rem; margin: .4rem 0; }
.call.added { background: var(--added); } .call.removed { background: var(--removed); }
.mark { font-weight: 700; font-family: ui-monospace, monospace; margin-right: .35rem; }
.differs { background: var(--differs); }
.answer-error { color: var(--fail); }
.muted { opacity: .6; }
.legend span { margin-right: 1rem; padding: 0 .3rem; }
`;
