import { access } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCodecServer } from '../../src/codec/codec-server.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { dynamicConfigArguments } from '../../src/server-settings.js';
import { freePort } from '../support/free-port.js';
import { temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { encryptingClient, encryptingWorker, keyRing } from './support.js';
import { createLocalEnvironment } from '../../src/cli/dev-server.js';

/** Debian's Chromium, which `.ci/run` installs (as in test/cli/embedded-server.test.ts). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = 'web-ui-token-0123456789abcdef';
const CANARY = 'canary-b20w5e';

let environment: TestWorkflowEnvironment;
let codecServer: Server;
let browser: Browser;
let ui: string;
let codec: string;
const lines: string[] = [];
let runId: string;

beforeAll(async () => {
  await access(CHROMIUM).catch(() => {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  });
  const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
  ui = `http://127.0.0.1:${uiPort}`;
  codec = `http://127.0.0.1:${codecPort}`;
  const keys = await keyRing('k1');
  codecServer = await startCodecServer({
    codec: new EncryptionCodec(keys),
    token: TOKEN,
    origins: [ui],
    namespace: 'default',
    host: '127.0.0.1',
    port: codecPort,
    say: (line) => lines.push(line),
  });
  // A dev server of its own: its Web UI is told the codec server's address, as an operator would.
  environment = await createLocalEnvironment({
    server: {
      executable: inject('temporalExecutable'),
      ip: '127.0.0.1',
      port,
      ui: true,
      uiPort,
      log: { format: 'pretty', level: 'error' },
      extraArgs: [...dynamicConfigArguments(), '--ui-codec-endpoint', codec],
    },
  });
  const server: TestServer = {
    connection: environment.nativeConnection,
    client: environment.client,
    close: () => Promise.resolve(),
  };
  await ensureSearchAttributes(environment.client.connection, 'default', silentLogger);
  const model = await ScriptedModel.start([reply.text(`The answer is ${CANARY}-answer.`)]);
  const taskQueue = `codec-ui-${randomUUID()}`;
  const worker = await encryptingWorker(server, {
    keys,
    model,
    taskQueue,
    workspace: await temporaryWorkspace(),
  });
  try {
    runId = await worker.runUntil(async () => {
      const keel = encryptingClient(server, keys, taskQueue);
      const started = await keel.startRun({ task: `Tell me ${CANARY}-task` });
      await keel.waitForResult(started);
      return started;
    });
  } finally {
    await model.close();
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await environment?.teardown();
  codecServer?.closeAllConnections();
  await new Promise((resolve) => codecServer?.close(resolve));
});

/** The run page's text once the UI has shown the run's input (its result comes with it). */
async function runPage(page: Page, expected: string): Promise<string> {
  await page.goto(`${ui}/namespaces/default/workflows/${runId}`);
  try {
    await page.getByText(expected).filter({ visible: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText('Result', { exact: true }).filter({ visible: true }).first().waitFor();
  } catch (error) {
    await page.screenshot({ path: path.join(tmpdir(), `keel-ui-missing-${runId}.png`), fullPage: true });
    throw new Error(
      `The run page never showed ${expected}; it shows:\n${await page.locator('body').innerText()}`,
      { cause: error },
    );
  }
  return page.locator('body').innerText();
}

describe('the Temporal Web UI with keel codec-server', () => {
  it('shows a run as ciphertext until the browser signs in, then decoded', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    // The UI asks the codec server, which refuses a browser that has not signed in: the UI says so
    // and shows input and result as the ciphertext's base64.
    const encrypted = await runPage(page, 'Codec Server could not connect');
    expect(encrypted).not.toContain(CANARY);
    expect(lines).toContain('POST /decode 401');
    await page.screenshot({ path: path.join(tmpdir(), `keel-ui-encrypted-${runId}.png`), fullPage: true });

    // Sign in on the codec server's page, then turn on "Include cross-origin credentials" for it.
    await page.goto(codec);
    await page.locator('input[name="token"]').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in').waitFor();
    await page.goto(ui);
    await page.evaluate((endpoint) => {
      // The UI's own codec settings, as its dialog stores them (a browser value overrides the cluster's).
      const storage = (
        globalThis as unknown as { localStorage: { setItem(key: string, value: string): void } }
      ).localStorage;
      storage.setItem('endpoint', JSON.stringify(endpoint));
      storage.setItem('overrideRemoteCodecConfiguration', 'true');
      storage.setItem('includeCredentials', 'true');
    }, codec);
    const decoded = await runPage(page, `Tell me ${CANARY}-task`);
    expect(decoded).toContain(`The answer is ${CANARY}-answer.`);
    expect(lines).toContain('POST /decode 200');
    await page.screenshot({ path: path.join(tmpdir(), `keel-ui-decoded-${runId}.png`), fullPage: true });

    // Another browser, without the session: ciphertext again.
    const stranger = await (await browser.newContext()).newPage();
    expect(await runPage(stranger, 'Codec Server could not connect')).not.toContain(CANARY);
    await context.close();
  }, 120_000);
});
