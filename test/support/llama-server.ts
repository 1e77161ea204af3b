import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const script = fileURLToPath(new URL('../../scripts/llama/llama-server.sh', import.meta.url));
/** Loading a 100 MB model takes about a second here; the bound only turns a hang into a failure. */
const START_MS = 60_000;

/** llama.cpp's own server, serving SmolLM2-135M-Instruct on loopback, started by this test. */
export interface LlamaServer {
  /** Its OpenAI-compatible base URL (`…/v1`), for OPENAI_BASE_URL. */
  url: string;
  /** The model name it answers to. */
  model: string;
  pid: number;
  /** What it wrote, for a failing test to show. */
  output(): string;
  /** A counter or gauge of its own metrics (`prompt_tokens_total`, …; counters move as requests end). */
  metric(name: string): Promise<number>;
  /** Its one slot now: whether it is generating, and how many tokens it has written for that request. */
  slot(): Promise<{ processing: boolean; decoded: number }>;
  close(): Promise<void>;
}

/** The directory holding the server and the model, built and cached by scripts/llama/llama-server.sh. */
export async function llamaServerDirectory(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [script], {
    maxBuffer: 1 << 22,
    timeout: 1_800_000,
  });
  return stdout.trim().split('\n').at(-1)!;
}

/**
 * Starts `llama-server` with the model on a free loopback port, one slot (so one generation at a
 * time, as on a small machine), greedy sampling (the same prompt, the same answer), its metrics on,
 * and waits until it answers `/health`. `extra` adds the server's own flags (`--ignore-eos`, …).
 */
export async function startLlamaServer(
  options: { contextTokens?: number; model?: string; extra?: readonly string[] } = {},
): Promise<LlamaServer> {
  const directory = await llamaServerDirectory();
  const port = await freePort();
  const model = options.model ?? 'smollm2';
  const child: ChildProcess = spawn(
    path.join(directory, 'bin/llama-server'),
    [
      ...['--model', path.join(directory, 'models/SmolLM2-135M-Instruct.Q4_1.gguf')],
      ...['--alias', model, '--host', '127.0.0.1', '--port', String(port)],
      ...['--ctx-size', String(options.contextTokens ?? 4096), '--parallel', '1', '--threads', '2'],
      ...['--temp', '0', '--seed', '1'],
      '--jinja',
      '--metrics',
      '--no-webui',
      ...(options.extra ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (!exited) process.kill(-child.pid!, 'SIGKILL');
    await gone;
  };
  const deadline = Date.now() + START_MS;
  try {
    await ready();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: `${base}/v1`,
    model,
    pid: child.pid!,
    output: () => output,
    async slot() {
      const [slot] = (await (await fetch(`${base}/slots`)).json()) as Array<{
        is_processing: boolean;
        next_token?: Array<{ n_decoded?: number }>;
      }>;
      return { processing: slot!.is_processing, decoded: slot!.next_token?.[0]?.n_decoded ?? 0 };
    },
    async metric(name) {
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const line = new RegExp(`^llamacpp:${name}\\s+([0-9.e+]+)`, 'mu').exec(metrics);
      if (line === null)
        throw new Error(`llama-server's metrics have no ${name}:\n${metrics.slice(0, 2000)}`);
      return Number(line[1]);
    },
    close,
  };

  /** Waits until the server we started answers `/health` (and is ours, not another on the port). */
  async function ready(): Promise<void> {
    for (;;) {
      if (exited) throw new Error(`llama-server exited before it was ready:\n${output.slice(-3000)}`);
      if (Date.now() > deadline) {
        throw new Error(`llama-server did not answer /health within ${START_MS} ms:\n${output.slice(-3000)}`);
      }
      const healthy = await fetch(`${base}/health`).then(
        (response) => response.ok,
        () => false,
      );
      // Ours, not another process that took the port meanwhile: its /props names our model file.
      if (healthy) {
        const props = (await (await fetch(`${base}/props`)).json()) as { model_path?: string };
        if (!props.model_path?.startsWith(directory))
          throw new Error(`Something else answers on port ${port}: ${JSON.stringify(props).slice(0, 300)}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
