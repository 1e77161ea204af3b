import { ToolError } from '../tool-error.js';

/** A regex for the pattern: Unicode-aware when it parses as such, else as older JavaScript would read it. */
export function compilePattern(pattern: string, regex: boolean, caseSensitive: boolean): RegExp {
  const source = regex ? pattern : pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const flags = caseSensitive ? '' : 'i';
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new ToolError(
        `pattern is not a valid regular expression: ${(error as Error).message}. ` +
          'Fix it, or set regex to false to search for the text as it is',
      );
    }
  }
}
