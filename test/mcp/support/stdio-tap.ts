// Runs the command in its arguments as a child and passes stdin and stdout through unchanged,
// copying each line the client sends to stderr as `tap> <line>`: a test reads what reached the
// real server (a `notifications/cancelled`, say) from the worker log, where server stderr goes.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: stdio-tap <command> [args…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  process.stderr.write(`tap> ${line}\n`);
  child.stdin.write(`${line}\n`);
});
process.stdin.on('end', () => child.stdin.end());
child.stdout.pipe(process.stdout);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const name of ['SIGTERM', 'SIGINT'] as const) process.on(name, () => child.kill(name));
