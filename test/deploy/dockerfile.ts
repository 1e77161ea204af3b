/**
 * One Dockerfile instruction: `COPY --from=build /app/dist ./dist` is
 * `{ keyword: 'COPY', flags: { from: 'build' }, args: ['/app/dist', './dist'] }`.
 */
export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string[];
}

/** A build stage: the image it starts `FROM`, its `AS` name, and its instructions after `FROM`. */
export interface Stage {
  base: string;
  name: string | undefined;
  instructions: Instruction[];
}

/**
 * Parses the Dockerfile syntax Keel's Dockerfile uses: comments, `\` continuations, `--flag=value`
 * flags, and shell or JSON (exec) form arguments. No heredocs, no escape directive, no ARG substitution.
 */
export function parseDockerfile(source: string): Stage[] {
  const logicalLines = source
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const stages: Stage[] = [];
  for (const line of logicalLines) {
    const instruction = parseInstruction(line);
    if (instruction.keyword === 'FROM') {
      const [base = '', as, name] = instruction.args;
      stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`Dockerfile: ${instruction.keyword} before any FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

function parseInstruction(line: string): Instruction {
  const [keyword = '', ...rest] = line.split(/\s+/);
  const text = line.slice(keyword.length).trim();
  const flags: Record<string, string> = {};
  let remainder = text;
  for (
    let flag = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(remainder);
    flag;
    flag = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(remainder)
  ) {
    flags[flag[1]!] = flag[2] ?? 'true';
    remainder = remainder.slice(flag[0].length);
  }
  const args = remainder.startsWith('[') ? (JSON.parse(remainder) as string[]) : remainder.split(/\s+/);
  return { keyword: keyword.toUpperCase(), flags, args: rest.length === 0 ? [] : args };
}
