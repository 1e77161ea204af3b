/**
 * One line per issue (of a `ZodError` or a `checkValue`), `path: message`: the form a model (or a
 * person) can use to fix the input.
 */
export function formatIssues(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): string[] {
  return error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
}

/** A zod issue's path as people write it: `(root)`, `startLine`, `edits[0].text`. */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}
