import type { Rule } from 'eslint';

/** Requires a promise held in a variable to be awaited or handled before its function awaits anything else. */
declare const rule: Rule.RuleModule;
export default rule;
