import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCodecServer } from '../../src/codec/codec-server.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { payloadsToJson } from '../../src/codec/proto-json.js';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { startCli, testServerCliEnvironment } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { silentLogger } from '../support/loggers.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { encryptingClient, encryptingWorker, keyRing, KEYS } from './support.js';

const TOKEN = 'codec-token-0123456789abcdef';
const UI = 'http://localhost:8233';
const CANARY = 'canary-c0dec5';

let server: Server;
let url: string;
const lines: string[] = [];
beforeAll(async () => {
  server = await startCodecServer({
    codec: new EncryptionCodec(await keyRing('k1')),
    token: TOKEN,
    origins: [UI],
    namespace: 'default',
    host: '127.0.0.1',
    port: 0,
    say: (line) => lines.push(line),
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const json = { 'content-type': 'application/json' };
const bearer = { authorization: `Bearer ${TOKEN}` };
const body = (value: unknown) =>
  JSON.stringify({
    payloads: [defaultPayloadConverter.toPayload(value)].map(
      (payload) => payloadsToJson([payload]).payloads[0],
    ),
  });

describe('keel codec-server over HTTP', () => {
  it('encodes and decodes proto-JSON payloads for a caller with the token, and logs no payload', async () => {
    const encoded = await fetch(`${url}/encode`, {
      method: 'POST',
      headers: { ...json, ...bearer },
      body: body(CANARY),
    });
    expect(encoded.status).toBe(200);
    const sealed = (await encoded.json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(Buffer.from(sealed.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(sealed.payloads[0]!.data, 'base64').toString('latin1')).not.toContain(CANARY);
    // The endpoint may sit under any path: only the last part says encode or decode.
    const decoded = await fetch(`${url}/default/decode?preserveStorageRefs=true`, {
      method: 'POST',
      headers: { ...json, ...bearer, 'x-namespace': 'default' },
      body: JSON.stringify(sealed),
    });
    expect(decoded.status).toBe(200);
    const plain = (await decoded.json()) as { payloads: Array<{ data: string }> };
    expect(Buffer.from(plain.payloads[0]!.data, 'base64').toString()).toBe(JSON.stringify(CANARY));
    expect(lines).toContain('POST /encode 200');
    expect(lines.join('\n')).not.toContain(CANARY);
    expect(lines.join('\n')).not.toContain(sealed.payloads[0]!.data.slice(0, 16));
  });

  it('answers the Web UI preflight for its origin only, and refuses other origins', async () => {
    const preflight = await fetch(`${url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const other = await fetch(`${url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example' },
    });
    expect(other.status).toBe(403);
    const post = await fetch(`${url}/decode`, {
      method: 'POST',
      headers: { ...json, ...bearer, origin: 'http://evil.example' },
      body: body(1),
    });
    expect(post.status).toBe(403);
    expect(await post.text()).toContain('Origin http://evil.example may not use this codec server');
  });

  it('refuses bad requests with a 4xx that says what is wrong', async () => {
    const cases: Array<[RequestInit & { path?: string }, number, string]> = [
      [{ headers: json, body: body(1) }, 401, 'needs its token'],
      [
        { headers: { ...json, authorization: 'Bearer wrong-token-0123456789' }, body: body(1) },
        401,
        'needs its token',
      ],
      [
        { headers: { ...bearer, 'content-type': 'text/plain' }, body: body(1) },
        415,
        'Content-Type: application/json',
      ],
      [{ headers: { ...json, ...bearer }, body: '{' }, 400, 'not JSON'],
      [{ headers: { ...json, ...bearer }, body: '{"payloads":[{"data":"%%%"}]}' }, 400, 'must be base64'],
      [{ headers: { ...json, ...bearer }, body: '{"items":[]}' }, 400, '{"payloads": [...]}'],
      [
        { headers: { ...json, ...bearer, 'x-namespace': 'other' }, body: body(1) },
        403,
        'serves namespace default, not other',
      ],
      [{ method: 'GET', headers: bearer }, 405, 'Use POST'],
      [{ path: '/nothing', method: 'POST', headers: bearer }, 404, 'Not found'],
    ];
    for (const [init, status, message] of cases) {
      const response = await fetch(`${url}${init.path ?? '/decode'}`, { method: 'POST', ...init });
      expect(response.status, message).toBe(status);
      expect(await response.text()).toContain(message);
    }
    // A payload of a key the server lacks: named, and nothing decoded.
    const [foreign] = await new EncryptionCodec(await keyRing('k2')).encode([
      defaultPayloadConverter.toPayload(1),
    ]);
    const response = await fetch(`${url}/decode`, {
      method: 'POST',
      headers: { ...json, ...bearer },
      body: JSON.stringify(payloadsToJson([foreign!])),
    });
    expect(response.status).toBe(422);
    expect(await response.text()).toContain('key id "k2"');
  });

  it('signs a browser in with the token: a session cookie then authorises its calls', async () => {
    const page = await fetch(`${url}/`);
    expect(await page.text()).toContain('<input name="token" type="password"');
    const refused = await fetch(`${url}/`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'not-the-token-at-all' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const signed = await fetch(`${url}/`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }) });
    const cookie = signed.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^keel-codec-session=[\w-]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/u);
    expect(cookie).not.toContain(TOKEN);
    const decoded = await fetch(`${url}/decode`, {
      method: 'POST',
      headers: { ...json, origin: UI, cookie: cookie.split(';')[0]! },
      body: body(2),
    });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe(UI);
  });
});

/** The CLI's JSON with every base64 `data` value decoded beside it, so a search finds text inside payloads. */
function readable(output: string): string {
  const data = [...output.matchAll(/"data": "([^"]*)"/gu)].map((match) =>
    Buffer.from(match[1]!, 'base64').toString('utf8'),
  );
  return [output, ...data].join('\n');
}

describe('keel codec-server with the temporal CLI', () => {
  let temporal: TestServer;
  beforeAll(async () => {
    temporal = await connectTestServer();
    await ensureSearchAttributes(temporal.client.connection, inject('temporalNamespace'), silentLogger);
  });
  afterAll(async () => {
    await temporal?.close();
  });

  it('lets `temporal workflow show --codec-endpoint` print a run decoded, which it cannot without', async () => {
    const executable = inject('temporalExecutable');
    if (executable.type !== 'existing-path')
      throw new Error('This test needs the temporal CLI (TEMPORAL_CLI_PATH)');
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-codec-server-'));
    const keysFile = path.join(directory, 'keys');
    const tokenFile = path.join(directory, 'token');
    await writeFile(keysFile, `k1:${KEYS.k1}\n`, { mode: 0o600 });
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const keys = await keyRing('k1');
    const model = await ScriptedModel.start([reply.text(`Answered ${CANARY}-answer`)]);
    const taskQueue = `codec-${randomUUID()}`;
    const worker = await encryptingWorker(temporal, {
      keys,
      model,
      taskQueue,
      workspace: await temporaryWorkspace(),
    });
    const port = await freePort();
    const codecServer = startCli(
      ['codec-server', '--port', String(port), '--origin', UI, '--token-file', tokenFile],
      {
        env: testServerCliEnvironment({ KEEL_CODEC_KEYS_FILE: keysFile }),
      },
    );
    try {
      await codecServer.waitForOutput(`Keel codec server on http://127.0.0.1:${port}`);
      expect(codecServer.stderr).not.toContain(KEYS.k1);
      expect(codecServer.stderr).not.toContain(TOKEN);
      const runId = await worker.runUntil(async () => {
        const keel = encryptingClient(temporal, keys, taskQueue);
        const started = await keel.startRun({ task: `Say ${CANARY}-task` });
        await keel.waitForResult(started);
        return started;
      });
      const show = (...extra: string[]) =>
        promisify(execFile)(executable.path, [
          'workflow',
          'show',
          '--workflow-id',
          runId,
          '--address',
          inject('temporalAddress'),
          '--namespace',
          inject('temporalNamespace'),
          '--output',
          'json',
          ...extra,
        ]);
      const without = await show();
      expect(readable(without.stdout)).not.toContain(CANARY);
      expect(without.stdout).toContain(Buffer.from('binary/encrypted').toString('base64'));
      const decoded = await show(
        '--codec-endpoint',
        `http://127.0.0.1:${port}`,
        '--codec-auth',
        `Bearer ${TOKEN}`,
      );
      expect(readable(decoded.stdout)).toContain(`Say ${CANARY}-task`);
      expect(readable(decoded.stdout)).toContain(`Answered ${CANARY}-answer`);
      // Without the token the server refuses, and the CLI shows nothing decoded.
      const refused = await show('--codec-endpoint', `http://127.0.0.1:${port}`).catch(
        (error: { stdout?: string; stderr?: string }) => error,
      );
      expect(readable(refused.stdout ?? '')).not.toContain(CANARY);
      expect(codecServer.stderr).toContain('POST /decode 200');
      expect(codecServer.stderr).toContain('POST /decode 401');
      expect(codecServer.stderr).not.toContain(CANARY);
    } finally {
      codecServer.child.kill('SIGTERM');
      expect(await codecServer.exited, codecServer.stderr).toBe(0);
      await model.close();
    }
  }, 120_000);
});
