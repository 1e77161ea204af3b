import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { ConfigError } from '../config-error.js';
import type { RunInputArgs } from '../contract/run-input.js';
import type { ScheduleOptionsArgs } from '../schedule/schedule-options.js';
import { withCtrlCKey } from './ctrl-c-key.js';
import { HELP } from './help.js';
import { CliFailure, EXIT, output, reasonOf, UsageError } from './output.js';
import type { Output } from './output.js';

// Each command's module is imported in its `case` (`await import`), not here: together they bring the
// Temporal client, the worker's native bridge, the dev server, MCP and OpenTelemetry, over a second of
// CPU to load, which `keel --help`, a usage error or `keel status` would pay for nothing.

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'task-queue': { type: 'string' },
  demo: { type: 'boolean' },
  detach: { type: 'boolean' },
  id: { type: 'string' },
  agent: { type: 'string' },
  model: { type: 'string' },
  'max-turns': { type: 'string' },
  tools: { type: 'string' },
  instructions: { type: 'string' },
  limit: { type: 'string' },
  query: { type: 'string' },
  approve: { type: 'string' },
  session: { type: 'boolean' },
  conversation: { type: 'string' },
  args: { type: 'string' },
  note: { type: 'string' },
  reason: { type: 'string' },
  wait: { type: 'boolean' },
  stream: { type: 'boolean' },
  from: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  origin: { type: 'string' },
  'token-file': { type: 'string' },
  namespace: { type: 'string' },
  run: { type: 'string', multiple: true },
  history: { type: 'string', multiple: true },
  'instructions-file': { type: 'string' },
  unmatched: { type: 'string' },
  'allow-tools': { type: 'string' },
  match: { type: 'string' },
  judge: { type: 'string' },
  concurrency: { type: 'string' },
  html: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'output-schema': { type: 'string' },
  every: { type: 'string' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  overlap: { type: 'string' },
  paused: { type: 'boolean' },
} satisfies ParseArgsConfig['options'];

/** Which options each command accepts, beyond the common ones. */
const ACCEPTS: Record<string, string[]> = {
  run: [
    'demo',
    'detach',
    'id',
    'agent',
    'model',
    'max-turns',
    'tools',
    'instructions',
    'approve',
    'session',
    'conversation',
    'output-schema',
  ],
  chat: ['id', 'agent', 'model', 'max-turns', 'tools', 'instructions', 'approve', 'conversation'],
  worker: ['tools'],
  status: [],
  follow: ['stream', 'from'],
  result: [],
  cancel: [],
  list: ['limit', 'query'],
  approve: ['args', 'note'],
  reject: ['reason'],
  send: ['wait'],
  end: [],
  server: [],
  schedule: [
    'every',
    'cron',
    'timezone',
    'overlap',
    'paused',
    'note',
    'agent',
    'model',
    'max-turns',
    'tools',
    'instructions',
    'approve',
    'conversation',
    'output-schema',
  ],
  'codec-server': ['port', 'host', 'origin', 'token-file', 'namespace'],
  eval: [
    'run',
    'history',
    'query',
    'limit',
    'instructions',
    'instructions-file',
    'model',
    'agent',
    'tools',
    'conversation',
    'unmatched',
    'allow-tools',
    'match',
    'judge',
    'concurrency',
    'id',
    'html',
  ],
  export: ['output'],
};

/** Commands that go on until the run ends or Ctrl-C. */
const UNTIL_CTRL_C = ['run', 'worker', 'follow', 'send', 'chat', 'codec-server'];

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Usage errors can come before the options are parsed (or from parsing them): `--json` anywhere
  // before a `--` still asks for the JSON error.
  const options = argv.indexOf('--') === -1 ? argv : argv.slice(0, argv.indexOf('--'));
  const early = output(options.includes('--json'));
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(HELP.keel + '\n');
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  const accepted = ACCEPTS[command];
  if (accepted === undefined) return usage(early, `Unknown command "${command}".`, 'keel');
  let parsed: ReturnType<
    typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>
  >;
  try {
    parsed = parseArgs({
      args: negativeValues(rest),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usage(early, (error as Error).message, command);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP[command] + '\n');
    return EXIT.ok;
  }
  const stray = Object.keys(values).filter(
    (name) => !['json', 'help', 'task-queue', ...accepted].includes(name),
  );
  if (stray.length > 0)
    return usage(early, `Option --${stray[0]} does not apply to "keel ${command}".`, command);
  const out = output(values.json === true);
  // Read once a command's arguments are known to be right: it needs the configuration module.
  const taskQueue = async (): Promise<string> => (await import('./io.js')).taskQueueOf(values['task-queue']);
  const dispatch = async (): Promise<number> => {
    switch (command) {
      case 'run': {
        const input = await runInput(positionals, values);
        const { runCommand } = await import('./run-command.js');
        return await runCommand(out, {
          input,
          runId: values.id,
          taskQueue: await taskQueue(),
          detach: values.detach === true,
          demo: values.demo === true,
        });
      }
      case 'chat': {
        if (positionals.length > 1)
          throw new UsageError('Give at most one argument: the session to continue.');
        // The options of a new session are `keel run`'s; its task is the first message typed.
        const input: Partial<RunInputArgs> = await runInput(['…'], values);
        delete input.task;
        const { chatCommand } = await import('./chat-command.js');
        return await chatCommand(out, {
          resume: positionals[0],
          id: values.id,
          input,
          taskQueue: await taskQueue(),
        });
      }
      case 'worker': {
        noPositionals(positionals);
        const { workerCommand } = await import('./worker-command.js');
        return await workerCommand(out, await taskQueue(), values.tools);
      }
      case 'schedule': {
        const [given, ...rest] = positionals;
        const action = given ?? '';
        const { scheduleCommand } = await import('./schedule-command.js');
        const id = (what: string): string => {
          if (rest.length !== 1)
            throw new UsageError(`Give exactly one argument after "${action}": ${what}.`);
          return rest[0]!;
        };
        const onlyFor = (names: string[], allowed: string[]): void => {
          const stray = names.filter(
            (name) => values[name as keyof typeof values] !== undefined && !allowed.includes(name),
          );
          if (stray.length > 0)
            throw new UsageError(`Option --${stray[0]} does not apply to "keel schedule ${action}".`);
        };
        const scheduleOptions = ['every', 'cron', 'timezone', 'overlap', 'paused'];
        const runOptions = ACCEPTS.run!.filter((name) => !['demo', 'detach', 'id', 'session'].includes(name));
        switch (action) {
          case 'create': {
            if (rest.length < 2)
              throw new UsageError(
                'Give the schedule id and the task, e.g. keel schedule create nightly "Summarise today\'s tickets" --every 1d',
              );
            const [scheduleId, ...task] = rest;
            const options: ScheduleOptionsArgs = { scheduleId: scheduleId! };
            if (typeof values.every === 'string') options.every = values.every;
            if (typeof values.cron === 'string') options.cron = values.cron;
            if (typeof values.timezone === 'string') options.timezone = values.timezone;
            if (typeof values.overlap === 'string')
              options.overlap = values.overlap as ScheduleOptionsArgs['overlap'];
            if (values.paused === true) options.paused = true;
            if (typeof values.note === 'string') options.note = values.note;
            const input = await runInput(task, values);
            return await scheduleCommand(out, await taskQueue(), { kind: 'create', options, input });
          }
          case 'list':
            if (rest.length > 0) throw new UsageError('"keel schedule list" takes no arguments.');
            onlyFor([...scheduleOptions, ...runOptions, 'note'], []);
            return await scheduleCommand(out, await taskQueue(), { kind: 'list' });
          case 'pause':
          case 'unpause':
            onlyFor([...scheduleOptions, ...runOptions], []);
            return await scheduleCommand(out, await taskQueue(), {
              kind: action,
              scheduleId: id('the schedule id'),
              note: values.note,
            });
          case 'trigger':
          case 'delete':
            onlyFor([...scheduleOptions, ...runOptions, 'note'], []);
            return await scheduleCommand(out, await taskQueue(), {
              kind: action,
              scheduleId: id('the schedule id'),
            });
          default:
            throw new UsageError(
              `${action === '' ? 'Give' : `Unknown "${action}": give`} one of create, list, pause, unpause, trigger, delete.`,
            );
        }
      }
      case 'server': {
        const { serverCommand } = await import('./server-command.js');
        return await serverCommand(out, positionals);
      }
      case 'codec-server': {
        noPositionals(positionals);
        const { codecServerCommand } = await import('./codec-server-command.js');
        return await codecServerCommand(out, {
          port: values.port,
          host: values.host,
          origins: (values.origin ?? '')
            .split(',')
            .map((origin) => origin.trim())
            .filter(Boolean),
          tokenFile: values['token-file'],
          namespace: values.namespace,
        });
      }
      case 'eval': {
        if (positionals.length > 1) throw new UsageError('Give at most one argument: the eval file.');
        const { MAX_QUERY_CASES } = await import('../eval/collect-cases.js');
        const limit =
          values.limit === undefined ? undefined : wholeNumber(values.limit, '--limit', 1, MAX_QUERY_CASES);
        const { evalPlan } = await import('./eval-options.js');
        const plan = await evalPlan({
          file: positionals[0],
          runs: values.run ?? [],
          histories: values.history ?? [],
          query: values.query,
          limit,
          instructions: values.instructions,
          instructionsFile: values['instructions-file'],
          model: values.model,
          agent: values.agent,
          tools: values.tools === undefined ? undefined : names(values.tools, '--tools'),
          conversation: values.conversation,
          unmatched: values.unmatched,
          allowTools:
            values['allow-tools'] === undefined ? undefined : names(values['allow-tools'], '--allow-tools'),
          match: values.match,
          judge: values.judge,
          concurrency: wholeNumber(values.concurrency, '--concurrency', 1, 64),
          evalId: values.id,
          html: values.html,
          taskQueue: await taskQueue(),
        });
        const { evalCommand } = await import('./eval-command.js');
        return await evalCommand(out, plan);
      }
      case 'list': {
        noPositionals(positionals);
        const limit = wholeNumber(values.limit, '--limit', 1) ?? 20;
        const { listCommand } = await import('./inspect-commands.js');
        return await listCommand(out, await taskQueue(), limit, values.query);
      }
      case 'approve':
      case 'reject': {
        const [runId, callId] = twoPositionals(positionals, 'the run id and the call id');
        const { approveCommand, rejectCommand } = await import('./message-commands.js');
        if (command === 'reject')
          return await rejectCommand(out, await taskQueue(), runId, callId, values.reason);
        return await approveCommand(out, await taskQueue(), runId, callId, {
          ...(values.args !== undefined ? { argumentsJson: values.args } : {}),
          ...(values.note !== undefined ? { note: values.note } : {}),
        });
      }
      case 'send': {
        const [runId, ...words] = positionals;
        if (runId === undefined || words.length === 0)
          throw new UsageError('Give the run id and the message, e.g. keel send <run id> "And the tests?"');
        const { sendCommand } = await import('./message-commands.js');
        return await sendCommand(out, await taskQueue(), runId, words.join(' '), values.wait === true);
      }
      case 'end': {
        const runId = onePositional(positionals, 'a run id');
        const { endCommand } = await import('./message-commands.js');
        return await endCommand(out, await taskQueue(), runId);
      }
      case 'follow': {
        const runId = onePositional(positionals, 'a run id');
        if (values.stream === true) {
          const { streamCommand, streamFrom } = await import('./stream-command.js');
          const from = streamFrom(values.from);
          return await streamCommand(out, await taskQueue(), runId, from);
        }
        if (values.from !== undefined) throw new UsageError('--from goes with --stream');
        const { followCommand } = await import('./inspect-commands.js');
        return await followCommand(out, await taskQueue(), runId);
      }
      case 'export': {
        const runId = onePositional(positionals, 'a run id');
        const { exportCommand } = await import('./export-command.js');
        return await exportCommand(out, await taskQueue(), runId, values.output);
      }
      default: {
        const runId = onePositional(positionals, 'a run id');
        const { cancelCommand, resultCommand, statusCommand } = await import('./inspect-commands.js');
        if (command === 'status') return await statusCommand(out, await taskQueue(), runId);
        if (command === 'result') return await resultCommand(out, await taskQueue(), runId);
        return await cancelCommand(out, await taskQueue(), runId);
      }
    }
  };
  try {
    // Commands that run until Ctrl-C read it as a key in a terminal: see withCtrlCKey.
    return await (UNTIL_CTRL_C.includes(command) ? withCtrlCKey(dispatch) : dispatch());
  } catch (error) {
    return await failure(out, command, error);
  }
}

/**
 * `--max-turns -1` is a value, not an option: parseArgs refuses a value that starts with a dash
 * unless it is written `--max-turns=-1`, so write it that way (the range check then explains).
 */
function negativeValues(args: readonly string[]): string[] {
  const result: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    const next = args[index + 1];
    const option = OPTIONS[arg.slice(2) as keyof typeof OPTIONS] as { type: string } | undefined;
    if (arg.startsWith('--') && option?.type === 'string' && next !== undefined && /^-\d/u.test(next)) {
      result.push(`${arg}=${next}`);
      index += 1;
    } else result.push(arg);
  }
  return result;
}

/** The option of `keel run` that sets each field of the run input, for errors that name it. */
const FLAG_OF: Partial<Record<string, string>> = {
  task: 'the task',
  agent: '--agent',
  model: '--model',
  instructions: '--instructions',
  maxTurns: '--max-turns',
  tools: '--tools',
  approvalTools: '--approve',
  conversation: '--conversation',
  output: '--output-schema',
};

/** The run input from `keel run`'s arguments, checked against the contract's schema: a bad one is a usage error. */
async function runInput(
  positionals: string[],
  values: Record<string, string | boolean | string[] | undefined>,
): Promise<RunInputArgs> {
  const task = positionals.join(' ').trim();
  if (task === '') throw new UsageError('Give the task, e.g. keel run "Summarise README.md"');
  const { RunInput, RunLimits } = await import('../contract/run-input.js');
  const input: RunInputArgs = { task };
  if (typeof values.agent === 'string') input.agent = values.agent;
  if (typeof values.model === 'string') input.model = values.model;
  if (typeof values.instructions === 'string') input.instructions = values.instructions;
  const { minValue, maxValue } = RunLimits.shape.maxTurns;
  const maxTurns = wholeNumber(values['max-turns'], '--max-turns', minValue ?? 1, maxValue ?? undefined);
  if (maxTurns !== undefined) input.maxTurns = maxTurns;
  if (typeof values.tools === 'string') input.tools = names(values.tools, '--tools');
  if (typeof values.approve === 'string') input.approvalTools = names(values.approve, '--approve');
  if (values.session === true) input.session = true;
  // The model server keeps the conversation (chained) or the run does (stateless); without the flag,
  // the worker's KEEL_CONVERSATION decides.
  if (typeof values.conversation === 'string')
    input.conversation = values.conversation as RunInputArgs['conversation'];
  if (typeof values['output-schema'] === 'string')
    input.output = { schema: await jsonFile(values['output-schema'], '--output-schema') };
  const parsed = RunInput.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const [field, ...rest] = issue.path;
      if (field === 'output')
        return `--output-schema: ${rest.slice(1).join('.') || '(root)'}: ${issue.message}`;
      const value = typeof field === 'string' ? (input as Record<string, unknown>)[field] : undefined;
      const shown = Array.isArray(value) ? ` (${value.join(',')})` : '';
      return `${FLAG_OF[String(field)] ?? String(field)}: ${issue.message}${shown}`;
    });
    throw new UsageError(issues.join('\n'));
  }
  return input;
}

/** The JSON object a file holds; a file that cannot be read or holds something else is a usage error. */
async function jsonFile(file: string, option: string): Promise<{ type: 'object' }> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new UsageError(`${option}: cannot read ${file}: ${(error as Error).message}`);
  });
  try {
    return JSON.parse(text) as { type: 'object' };
  } catch (error) {
    throw new UsageError(`${option}: ${file} is not JSON: ${(error as Error).message}`);
  }
}

/** Comma-separated names; an empty one (`--tools ""`, `--tools a,,b`) is a mistake, not "no tools". */
function names(list: string, option: string): string[] {
  const parts = list.split(',').map((name) => name.trim());
  if (parts.some((name) => name === ''))
    throw new UsageError(
      `${option} needs tool names separated by commas, e.g. ${option} read_file,list_directory (${
        option === '--tools' ? "without --tools the run gets all of the worker's tools" : 'no empty names'
      })`,
    );
  return parts;
}

function twoPositionals(positionals: string[], what: string): [string, string] {
  if (positionals.length !== 2) throw new UsageError(`Give exactly two arguments: ${what}.`);
  return [positionals[0]!, positionals[1]!];
}

/** A whole-number option within [min, max] (the contract's limits where it has them). */
function wholeNumber(
  value: string | boolean | string[] | undefined,
  option: string,
  min: number,
  max?: number,
): number | undefined {
  if (typeof value !== 'string') return undefined;
  const number = /^-?\d+$/u.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || (max !== undefined && number > max))
    throw new UsageError(
      `${option} must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, not ${JSON.stringify(value)}`,
    );
  return number;
}

function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Give exactly one argument: ${what}.`);
  return positionals[0]!;
}

function noPositionals(positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}".`);
}

function usage(out: Output, message: string, command: string): number {
  const help = `See: keel ${command === 'keel' ? '' : command + ' '}--help`;
  out.error('usage', `${message}\n${help}`, { help });
  return EXIT.usage;
}

/** Every failure of a command, as one line (the JSON error with `--json`) and its exit code. */
async function failure(out: Output, command: string, error: unknown): Promise<number> {
  if (error instanceof UsageError) return usage(out, error.message, command);
  if (error instanceof CliFailure) {
    out.error(error.code, error.message, error.extra);
    return error.exitCode;
  }
  // Loaded here, not at the top: a usage error must not pay for the Temporal client (a command that
  // failed has mostly loaded them already).
  const [{ InvalidRunInputError, RunUpdateRefusedError }, { ServiceError }, { WorkflowNotFoundError }] =
    await Promise.all([import('../client.js'), import('@temporalio/client'), import('@temporalio/common')]);
  const code =
    error instanceof ConfigError
      ? 'config'
      : error instanceof InvalidRunInputError
        ? 'invalid-run-input'
        : error instanceof RunUpdateRefusedError
          ? 'refused'
          : error instanceof WorkflowNotFoundError
            ? 'run-not-found'
            : error instanceof ServiceError
              ? 'server-error'
              : 'failed';
  if (error instanceof WorkflowNotFoundError) {
    out.error(code, `There is no run ${error.workflowId} (in this namespace).`, { runId: error.workflowId });
    return EXIT.error;
  }
  const known = code !== 'failed' && code !== 'server-error';
  const message = known ? (error as Error).message : `keel ${command} failed: ${reasonOf(error)}`;
  out.error(code, message);
  if (!known && process.env.KEEL_DEBUG) out.note(String((error as Error).stack));
  return EXIT.error;
}
