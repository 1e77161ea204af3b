import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { listensOn } from './listening-process.js';

const script = fileURLToPath(new URL('../../scripts/litellm/litellm.sh', import.meta.url));
/** A first start imports LiteLLM's whole proxy (tens of seconds on two busy cores). */
const START_MS = 180_000;

/** A LiteLLM proxy this test started, in front of a chat-completions upstream. */
export interface LiteLLM {
  /** Its OpenAI-compatible base URL (`…/v1`), for OPENAI_BASE_URL. */
  url: string;
  /** The master key, the OPENAI_API_KEY a client gives it. */
  key: string;
  /** The model name it serves. */
  model: string;
  /** What it wrote, for a failing test to show. */
  output(): string;
  close(): Promise<void>;
}

/** The proxy's binary, installed and cached by scripts/litellm/litellm.sh (once per machine). */
export async function liteLLMBinary(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [script], { maxBuffer: 1 << 20, timeout: 900_000 });
  return stdout.trim().split('\n').at(-1)!;
}

/**
 * Starts LiteLLM's proxy without a database (as the teams that front other models with it often
 * run it), serving `model` from the chat-completions server at `upstream` through `custom_openai/`:
 * LiteLLM itself turns each Responses API request into a chat completion and back.
 */
export async function startLiteLLM(upstream: string, model = 'scripted'): Promise<LiteLLM> {
  const binary = await liteLLMBinary();
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-litellm-'));
  const config = path.join(directory, 'config.yaml');
  await writeFile(
    config,
    [
      'model_list:',
      `  - model_name: ${model}`,
      '    litellm_params:',
      `      model: custom_openai/${model}`,
      `      api_base: ${upstream}`,
      '      api_key: sk-upstream-unused',
      '',
    ].join('\n'),
  );
  const key = `sk-${randomBytes(24).toString('hex')}`;
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--config', config, '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: directory,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: directory,
        LITELLM_MASTER_KEY: key,
        // No internet here: the bundled price list, not a download that fails three times first.
        LITELLM_LOCAL_MODEL_COST_MAP: 'True',
        LITELLM_TELEMETRY: 'False',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  // Its process group: the proxy and anything it started. Gone already is fine.
  const signal = (name: NodeJS.Signals): void => {
    try {
      if (!exited) process.kill(-child.pid!, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  const close = async (): Promise<void> => {
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
    await rm(directory, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_MS;
  for (;;) {
    if (exited) {
      await close();
      throw new Error(`LiteLLM exited before it answered:\n${output}`);
    }
    const live = await fetch(`${url}/health/liveliness`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    // The answer must come from the process started here, not from someone else's on that port.
    if (live && (await listensOn(child.pid!, port))) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`LiteLLM did not answer within ${START_MS / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { url: `${url}/v1`, key, model, output: () => output, close };
}
