import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { workerConfigFromEnvironment } from '../config.js';
import { ConfigError } from '../config-error.js';
import type { RunInputArgs } from '../contract/run-input.js';
import { InvalidRunInputError } from '../client.js';
import { runWorker } from '../worker.js';
import { resolveTarget } from './embedded.js';
import {
  cancelCommand,
  followCommand,
  listCommand,
  resultCommand,
  statusCommand,
} from './inspect-commands.js';
import { dataDirectory, EXIT, output, taskQueueOf, UsageError } from './io.js';
import type { Output } from './io.js';
import { approveCommand, endCommand, rejectCommand, sendCommand } from './message-commands.js';
import { runCommand } from './run-command.js';

const COMMON = `
Options for every command:
  --task-queue <name>   task queue (default: KEEL_TASK_QUEUE or "keel")
  --json                machine-readable output on stdout
  -h, --help            this help

Without TEMPORAL_ADDRESS, \`run\` and \`worker\` use the Temporal server on localhost:7233, or start one
(persisted in ./.keel, Web UI on http://localhost:8233); the other commands only look for one.
Exit codes: 0 done, 1 error, 2 bad usage, 3 the run ended without completing.`;

const HELP: Record<string, string> = {
  keel: `keel: durable AI agent runs on Temporal

Usage: keel <command> [options]

Commands:
  run "<task>"     start a run and follow it (Ctrl-C: cancel or detach)
  worker           run a worker until Ctrl-C
  status <id>      a run's live state
  follow <id>      print a run's progress until it ends
  result <id>      wait for a run's result
  list             recent runs
  cancel <id>      cancel a run
  approve <id> <call>   let a call that waits for approval run
  reject <id> <call>    refuse a call that waits for approval
  send <id> "<text>"    give a run (or session) a message
  end <id>         end a session

\`keel <command> --help\` for a command's options.${COMMON}`,
  run: `Usage: keel run "<task>" [options]

Starts a run and follows it: each turn, each tool call and its outcome, tokens.

  --demo                 use a built-in scripted model (no key needed; it is not an AI)
  --detach               print the run id and return at once
  --id <run id>          workflow id to use (a business key makes starts idempotent)
  --agent <name>         a named agent the worker offers: its instructions, model, tools,
                         approvals and limits, unless other options set their own
  --model <name>         model (default: the agent's, else KEEL_MODEL)
  --max-turns <n>        model turns before the run stops
  --tools <a,b>          tools to offer (default: all the worker has)
  --approve <a,b>        tools whose calls wait for your approval (keel approve / reject)
  --session              stay open after the answer for \`keel send\` messages; following stops at
                         each answer
  --instructions <text>  system instructions${COMMON}`,
  worker: `Usage: keel worker [options]

Runs a worker: it hosts the agentRun workflow and its activities until SIGINT/SIGTERM. Configured by
environment variables (see README: OPENAI_API_KEY, KEEL_WORKSPACE, …).

  --tools <module>       a JavaScript or TypeScript module exporting your own tools
                         (\`export const tools = [defineTool(…)]\`), offered beside the built-in
                         ones (default: KEEL_TOOLS_MODULE)${COMMON}`,
  status: `Usage: keel status <run id> [options]${COMMON}`,
  follow: `Usage: keel follow <run id> [options]

Prints progress until the run ends. Ctrl-C stops following; the run goes on.${COMMON}`,
  result: `Usage: keel result <run id> [options]${COMMON}`,
  list: `Usage: keel list [--limit <n>] [--query <visibility query>] [options]

  --limit <n>         most runs to show (default 20)
  --query <filter>    extra visibility filter, e.g. 'KeelStatus = "failed"'${COMMON}`,
  cancel: `Usage: keel cancel <run id> [options]${COMMON}`,
  approve: `Usage: keel approve <run id> <call id> [--args <json>] [--note <text>] [options]

Lets a call that waits for approval run (\`keel status\` lists them).

  --args <json>    run it with these arguments instead (checked against the tool's schema)
  --note <text>    a note for the record and the model${COMMON}`,
  reject: `Usage: keel reject <run id> <call id> [--reason <text>] [options]

Refuses a call that waits for approval; the model sees the reason and can try another way.

  --reason <text>  why${COMMON}`,
  send: `Usage: keel send <run id> "<message>" [--wait] [options]

Gives a run a user message. It reaches the model at the next turn boundary; a session that waits
for a message starts a turn at once.

  --wait           follow the run until it has answered${COMMON}`,
  end: `Usage: keel end <run id> [options]

Ends a session: at once when it is idle, else after its current answer.${COMMON}`,
};

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
  args: { type: 'string' },
  note: { type: 'string' },
  reason: { type: 'string' },
  wait: { type: 'boolean' },
} satisfies ParseArgsConfig['options'];

/** Which options each command accepts, beyond the common ones. */
const ACCEPTS: Record<string, string[]> = {
  run: ['demo', 'detach', 'id', 'agent', 'model', 'max-turns', 'tools', 'instructions', 'approve', 'session'],
  worker: ['tools'],
  status: [],
  follow: [],
  result: [],
  cancel: [],
  list: ['limit', 'query'],
  approve: ['args', 'note'],
  reject: ['reason'],
  send: ['wait'],
  end: [],
};

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(HELP.keel + '\n');
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  const accepted = ACCEPTS[command];
  if (accepted === undefined) return usage(`Unknown command "${command}".`, 'keel');
  let parsed: ReturnType<
    typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>
  >;
  try {
    parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return usage((error as Error).message, command);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP[command] + '\n');
    return EXIT.ok;
  }
  const stray = Object.keys(values).filter(
    (name) => !['json', 'help', 'task-queue', ...accepted].includes(name),
  );
  if (stray.length > 0) return usage(`Option --${stray[0]} does not apply to "keel ${command}".`, command);
  const out = output(values.json === true);
  const taskQueue = taskQueueOf(values['task-queue']);
  try {
    switch (command) {
      case 'run':
        return await runCommand(out, {
          input: runInput(positionals, values),
          runId: values.id,
          taskQueue,
          detach: values.detach === true,
          demo: values.demo === true,
        });
      case 'worker':
        noPositionals(positionals);
        return await workerCommand(out, taskQueue, values.tools);
      case 'list':
        noPositionals(positionals);
        return await listCommand(
          out,
          taskQueue,
          positiveInteger(values.limit, '--limit') ?? 20,
          values.query,
        );
      case 'approve':
      case 'reject': {
        const [runId, callId] = twoPositionals(positionals, 'the run id and the call id');
        if (command === 'reject') return await rejectCommand(out, taskQueue, runId, callId, values.reason);
        return await approveCommand(out, taskQueue, runId, callId, {
          ...(values.args !== undefined ? { argumentsJson: values.args } : {}),
          ...(values.note !== undefined ? { note: values.note } : {}),
        });
      }
      case 'send': {
        const [runId, ...words] = positionals;
        if (runId === undefined || words.length === 0)
          throw new UsageError('Give the run id and the message, e.g. keel send <run id> "And the tests?"');
        return await sendCommand(out, taskQueue, runId, words.join(' '), values.wait === true);
      }
      default: {
        const runId = onePositional(positionals, 'a run id');
        if (command === 'end') return await endCommand(out, taskQueue, runId);
        if (command === 'status') return await statusCommand(out, taskQueue, runId);
        if (command === 'follow') return await followCommand(out, taskQueue, runId);
        if (command === 'result') return await resultCommand(out, taskQueue, runId);
        return await cancelCommand(out, taskQueue, runId);
      }
    }
  } catch (error) {
    return failure(out, command, error);
  }
}

async function workerCommand(
  out: Output,
  taskQueue: string,
  toolsModule: string | undefined,
): Promise<number> {
  const config = {
    ...workerConfigFromEnvironment(),
    taskQueue,
    ...(toolsModule === undefined ? {} : { toolsModule }),
  };
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: true });
  try {
    await runWorker(config, {
      target,
      ...(target.dataDirectory === undefined ? {} : { dataDirectory: target.dataDirectory }),
    });
    return EXIT.ok;
  } finally {
    await target.embedded?.stop();
  }
}

function runInput(positionals: string[], values: Record<string, string | boolean | undefined>): RunInputArgs {
  const task = positionals.join(' ').trim();
  if (task === '') throw new UsageError('Give the task, e.g. keel run "Summarise README.md"');
  const input: RunInputArgs = { task };
  if (typeof values.agent === 'string') input.agent = values.agent;
  if (typeof values.model === 'string') input.model = values.model;
  if (typeof values.instructions === 'string') input.instructions = values.instructions;
  const maxTurns = positiveInteger(values['max-turns'], '--max-turns');
  if (maxTurns !== undefined) input.maxTurns = maxTurns;
  if (typeof values.tools === 'string') input.tools = names(values.tools);
  if (typeof values.approve === 'string') input.approvalTools = names(values.approve);
  if (values.session === true) input.session = true;
  return input;
}

function names(list: string): string[] {
  return list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

function twoPositionals(positionals: string[], what: string): [string, string] {
  if (positionals.length !== 2) throw new UsageError(`Give exactly two arguments: ${what}.`);
  return [positionals[0]!, positionals[1]!];
}

function positiveInteger(value: unknown, option: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new UsageError(`${option} must be a whole number of at least 1`);
  return number;
}

function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Give exactly one argument: ${what}.`);
  return positionals[0]!;
}

function noPositionals(positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}".`);
}

function usage(message: string, command: string): number {
  process.stderr.write(`${message}\nSee: keel ${command === 'keel' ? '' : command + ' '}--help\n`);
  return EXIT.usage;
}

function failure(out: Output, command: string, error: unknown): number {
  if (error instanceof UsageError) return usage(error.message, command);
  const known = error instanceof ConfigError || error instanceof InvalidRunInputError;
  const message = known
    ? error.message
    : `keel ${command} failed: ${(error as Error).message ?? String(error)}`;
  if (out.json) out.data({ error: message });
  out.note(known ? message : message + (process.env.KEEL_DEBUG ? `\n${(error as Error).stack}` : ''));
  return EXIT.error;
}
