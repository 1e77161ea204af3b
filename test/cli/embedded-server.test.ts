import { access, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { temporaryWorkspace } from '../support/harness.js';
import { LocalServers } from '../support/local-servers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';

/** Debian's Chromium, which `.ci/run` installs; Playwright's own browser download cannot work here. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Reads README.md, then answers. */
function readmePolicy(request: RecordedRequest) {
  return request.body.previous_response_id === undefined
    ? reply.calls({ name: 'read_file', arguments: { path: 'README.md', startLine: null, endLine: null } })
    : reply.text('It is a demo project.');
}

async function launchChromium(): Promise<Browser> {
  try {
    await access(CHROMIUM);
  } catch {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
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
}

/**
 * Waits until an embedded frame of the page shows `text`: the UI renders user metadata (summary,
 * details) as markdown in iframes, while the run's input appears in the page itself.
 */
async function waitForTextInEmbeddedFrame(page: Page, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames().filter((candidate) => candidate !== page.mainFrame())) {
      if ((await frame.getByText(text).count()) > 0) return;
    }
    await page.waitForTimeout(200);
  }
  throw new Error(`The page never showed ${JSON.stringify(text)}`);
}

/** The local servers these tests' commands start, which outlive the commands by design. */
const servers = new LocalServers();
afterEach(() => servers.stopAll());

describe('keel without TEMPORAL_ADDRESS', () => {
  it('runs the demo from nothing: starts a local server, hosts the worker, follows the run, leaves the server running', async () => {
    const workspace = await temporaryWorkspace();
    const { env: environment, dataDirectory } = await servers.setup();
    const { code, stdout, stderr } = await servers.runCli(['run', '--demo', 'What is in here?'], {
      env: environment,
      cwd: workspace,
    });
    expect(stderr).toContain('Starting a local Temporal server');
    expect(stdout).toContain('→ list_directory .');
    expect(stdout).toContain('✔ completed');
    expect(code).toBe(0);
    expect(stderr).toContain(
      'keeps running after this command ends, for later commands: `keel server stop` ends it.',
    );
    expect(await LocalServers.record(dataDirectory)).toBeDefined();
    expect((await servers.runCli(['server', 'status'], { env: environment })).code).toBe(0);
  }, 180_000);

  it('starts a persistent local server with the Web UI, where a finished run shows its summaries', async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'README.md'), '# Demo project\n');
    const model = await ScriptedModel.start(readmePolicy);
    // Ports of its own, so neither a developer's server on 7233 nor other tests get in the way.
    const {
      env: environment,
      port,
      uiPort,
      dataDirectory,
    } = await servers.setup({
      OPENAI_BASE_URL: model.url,
      // The OpenAI API's defaults: the scripted model keeps conversations as it does.
      KEEL_MODEL_MODE: 'background',
      KEEL_CONVERSATION: 'chained',
      KEEL_STATE_DIR: path.join(workspace, '.keel', 'state'),
    });
    const worker = servers.startCli(['worker'], { env: environment, cwd: workspace });
    let browser: Browser | undefined;
    try {
      await worker.waitForOutput('Keel worker on task queue "keel"');
      expect(worker.stderr).toContain('Starting a local Temporal server');

      const started = await servers.runCli(
        ['run', 'Summarise the README\nKeep it short.', '--detach', '--json'],
        {
          env: environment,
          cwd: workspace,
        },
      );
      expect(started.stderr).toContain(`Using Keel's local Temporal server on 127.0.0.1:${port}`);
      // keel worker serves the task queue, so keel run hosts no worker of its own.
      expect(started.stderr).not.toContain('hosted the only worker');
      const { runId } = JSON.parse(started.stdout) as { runId: string };
      const result = await servers.runCli(['result', runId, '--json'], { env: environment, cwd: workspace });
      expect(JSON.parse(result.stdout)).toMatchObject({
        status: 'completed',
        finalText: 'It is a demo project.',
      });

      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      // A hang detector, not a speed goal: the UI took over 30 s to draw the timeline beside two
      // CI runs.
      page.setDefaultTimeout(90_000);
      await page.goto(`http://localhost:${uiPort}/namespaces/default/workflows/${runId}`);
      // The timeline labels every activity with its summary.
      await page.getByText('read_file README.md').first().waitFor();
      await page.getByText('model turn 2').first().waitFor();
      const screenshot = process.env.KEEL_UPDATE_SCREENSHOTS
        ? path.resolve(import.meta.dirname, '../../docs/temporal-ui-run.png')
        : path.join(tmpdir(), `keel-ui-${runId}.png`);
      await mkdir(path.dirname(screenshot), { recursive: true });
      await page.screenshot({ path: screenshot, fullPage: true });
      // The run's own summary (the task's first line) and details are under User Metadata.
      await page.getByRole('tab', { name: 'User Metadata' }).click();
      await page.screenshot({ path: screenshot.replace(/\.png$/, '-metadata.png'), fullPage: true });
      await waitForTextInEmbeddedFrame(page, 'Summarise the README');
      await waitForTextInEmbeddedFrame(page, 'Keep it short.');

      worker.child.kill('SIGINT');
      expect(await worker.exited).toBe(0);

      // The run is still there after the server restarts: it was persisted in KEEL_DATA_DIR.
      expect((await servers.runCli(['server', 'stop'], { env: environment })).code).toBe(0);
      await access(path.join(dataDirectory, 'temporal.db'));
      const again = servers.startCli(['worker'], { env: environment, cwd: workspace });
      try {
        await again.waitForOutput('Keel worker on task queue "keel"');
        let listed: Array<{ runId: string; keelStatus: string }> = [];
        while (listed.length === 0) {
          const list = await servers.runCli(['list', '--json'], { env: environment, cwd: workspace });
          listed = JSON.parse(list.stdout) as typeof listed;
        }
        expect(listed).toMatchObject([{ runId, keelStatus: 'completed' }]);
      } finally {
        again.child.kill('SIGINT');
        await again.exited;
      }
    } finally {
      await browser?.close();
      if (worker.child.exitCode === null) {
        worker.child.kill('SIGINT');
        await worker.exited;
      }
      await model.close();
    }
  }, 300_000);
});
