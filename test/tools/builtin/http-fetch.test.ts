import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { createSanitizer } from '../../../src/safety/sanitize.js';
import { createHttpFetchTool } from '../../../src/tools/builtin/http-fetch.js';
import type { HostLookup, HttpFetchOptions } from '../../../src/tools/builtin/http-fetch.js';
import { ToolDefinitionError } from '../../../src/tools/define-tool.js';
import type { Tool } from '../../../src/tools/define-tool.js';
import { executeToolCall } from '../../../src/tools/executor.js';
import type { ExecuteRequest } from '../../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../../src/tools/idempotency.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { deferred } from '../../support/deferred.js';
import { freePort } from '../../support/free-port.js';
import { RecordingLogger } from '../../support/loggers.js';
import { ok, toolError } from '../../support/observations.js';

/** One request a test server received, body read in full. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A node:http server on 127.0.0.1 that records every request before handing it to the test. */
interface TestServer {
  port: number;
  received: Received[];
}

type Handler = (request: IncomingMessage, response: ServerResponse, received: Received) => void;

let servers: Array<http.Server | https.Server>;
let logger: RecordingLogger;

beforeEach(() => {
  servers = [];
  logger = new RecordingLogger();
});

afterEach(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  // Refusals and network failures are ToolErrors: nothing should reach the worker log as a crash.
  expect(logger.entries).toEqual([]);
});

async function startServer(handle: Handler): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      handle(request, response, entry);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no port');
  return { port: address.port, received };
}

/** A server that answers every request with `status`, `headers` and `body`. */
function answering(status: number, headers: http.OutgoingHttpHeaders, body: string | Buffer = ''): Handler {
  return (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

/** A DNS stand-in: each name resolves to the listed addresses; it records every name asked. */
function fakeDns(table: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) {
      return Promise.reject(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
      );
    }
    return Promise.resolve(addresses.map((address) => ({ address, family: isIP(address) })));
  };
  return Object.assign(lookup, { asked });
}

function fetchTool(options: Partial<HttpFetchOptions>): Tool {
  return createHttpFetchTool({ allowHosts: ['127.0.0.1'], ...options });
}

/** Runs one http_fetch call through the executor, as the worker would. */
function call(
  tool: Tool,
  args: Record<string, unknown>,
  extra: Partial<ExecuteRequest> = {},
  idempotencyStore = new MemoryIdempotencyStore(),
): Promise<Observation> {
  return executeToolCall(
    {
      call: { callId: 'call_1', name: tool.name, argumentsJson: JSON.stringify(args) },
      idempotencyKey: 'run:call_1',
      outputCharLimit: 100_000,
      ...extra,
    },
    {
      registry: new ToolRegistry([tool]),
      sanitizer: createSanitizer(),
      logger,
      idempotencyStore,
    },
  );
}

function outputOf(observation: Observation): string {
  if (!observation.ok) throw new Error(`expected output, got ${observation.error}: ${observation.message}`);
  return observation.output;
}

function messageOf(observation: Observation): string {
  if (observation.ok) throw new Error(`expected a refusal, got output: ${observation.output}`);
  return observation.message;
}

/** A self-signed certificate for secure.test (made with openssl, valid for a century). */
const SELF_SIGNED = {
  cert: `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUfjlk+lpKZcqvF/MzJaDDrHvlkL8wCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc2VjdXJlLnRlc3QwIBcNMjYxMTMwMDEzMzMwWhgPMjEyNjEx
MDYwMTMzMzBaMBYxFDASBgNVBAMMC3NlY3VyZS50ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEQwOG+Eo0WdRvq/NUBxdTksuW+2HMgQAaNy0S6cVujNbrRJp4
o81fIcT9thteyNnSp2TUlhxmk78pityogggHt6NrMGkwHQYDVR0OBBYEFKRJLb0k
WhQc/pYZbpJoWtwp3huLMB8GA1UdIwQYMBaAFKRJLb0kWhQc/pYZbpJoWtwp3huL
MA8GA1UdEwEB/wQFMAMBAf8wFgYDVR0RBA8wDYILc2VjdXJlLnRlc3QwCgYIKoZI
zj0EAwIDRwAwRAIga5mOjeYhBTAzWflFNGg7W18wE49ktEbPb0TItZHSCE4CIAZx
hfIJa0VrUYtQf5MO6TihGMxeXFaNsrd/OM2FIGbZ
-----END CERTIFICATE-----`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgUqVpNyxjZKm9ZBub
nwB5nOg79q4cnX/mQscK+MliYnuhRANCAARDA4b4SjRZ1G+r81QHF1OSy5b7YcyB
ABo3LRLpxW6M1utEmnijzV8hxP22G17I2dKnZNSWHGaTvymK3KiCCAe3
-----END PRIVATE KEY-----`,
};

const PRIVATE_REFUSAL =
  'not a public internet address (loopback, 127.0.0.0/8); http_fetch does not connect to loopback, ' +
  'private or link-local networks. An operator can allow them with the http_fetch setting allowPrivateAddresses.';

describe('createHttpFetchTool', () => {
  it('is named http_fetch, read-only unless POST is allowed, and names the allowed hosts in its description', () => {
    const tool = createHttpFetchTool({ allowHosts: ['docs.example.com', '*.Example.org:8443'] });
    expect(tool).toMatchObject({ name: 'http_fetch', readOnly: true, timeoutSeconds: 35 });
    expect(tool.description).toContain(
      'Only these hosts can be reached: docs.example.com, *.example.org:8443',
    );
    expect(tool.description).toContain('Only GET is enabled.');
    const posting = createHttpFetchTool({ allowHosts: ['a.test'], allowPost: true, timeoutSeconds: 10 });
    expect(posting).toMatchObject({ readOnly: false, timeoutSeconds: 15 });
  });

  it('refuses to be created without allowed hosts, with an unusable entry or with bad limits', () => {
    const attempts: Array<[HttpFetchOptions, string]> = [
      [{ allowHosts: [] }, 'allowHosts is empty'],
      [{ allowHosts: ['*'] }, 'Allowed host "*" is not usable'],
      [{ allowHosts: ['https://a.test'] }, 'without scheme or path'],
      [{ allowHosts: ['a.test/docs'] }, 'without scheme or path'],
      [{ allowHosts: ['*.10.0.0.1'] }, 'a wildcard cannot apply to an IP address'],
      [{ allowHosts: ['a.test:70000'] }, 'the port must be 1-65535'],
      [{ allowHosts: ['a.test'], timeoutSeconds: 0 }, 'timeoutSeconds'],
      [{ allowHosts: ['a.test'], maxResponseBytes: 1.5 }, 'maxResponseBytes'],
      [{ allowHosts: ['a.test'], maxRedirects: -1 }, 'maxRedirects'],
      [{ allowHosts: ['a.test'], outputCharLimit: 10 }, 'outputCharLimit'],
    ];
    for (const [options, message] of attempts) {
      expect(() => createHttpFetchTool(options)).toThrow(ToolDefinitionError);
      expect(() => createHttpFetchTool(options)).toThrow(message);
    }
  });

  it('fetches a text response from an allowed host, status line and content type first', async () => {
    const server = await startServer(
      answering(200, { 'content-type': 'text/plain; charset=utf-8' }, 'hello'),
    );
    const tool = fetchTool({ allowPrivateAddresses: true });
    const url = `http://127.0.0.1:${server.port}/greeting?name=keel`;
    expect(await call(tool, { url, method: null, headers: null, body: null })).toEqual(
      ok('HTTP 200 OK\nContent-Type: text/plain; charset=utf-8\n\nhello'),
    );
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ method: 'GET', url: '/greeting?name=keel', body: '' });
    expect(server.received[0]!.headers).toMatchObject({
      host: `127.0.0.1:${server.port}`,
      'user-agent': 'Keel-http_fetch/1',
    });
    expect(server.received[0]!.headers.authorization).toBeUndefined();
    expect(server.received[0]!.headers.cookie).toBeUndefined();
  });

  it('connects to the address it checked, sending the host name it was asked for', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'pinned'));
    // api.test cannot resolve through real DNS: the request can only land if it went where the lookup said.
    const dns = fakeDns({ 'api.test': ['127.0.0.1'] });
    const tool = fetchTool({ allowHosts: ['api.test'], allowPrivateAddresses: true, lookup: dns });
    expect(outputOf(await call(tool, { url: `http://api.test:${server.port}/` }))).toMatch(/\n\npinned$/);
    expect(dns.asked).toEqual(['api.test']);
    expect(server.received[0]!.headers.host).toBe(`api.test:${server.port}`);
  });

  it('refuses a host that is not on the allow-list, naming the allowed hosts, without resolving or contacting it', async () => {
    const server = await startServer(answering(200, {}, 'should not be reached'));
    const dns = fakeDns({ 'other.test': ['127.0.0.1'] });
    const tool = createHttpFetchTool({
      allowHosts: ['docs.example.com', '*.example.org'],
      allowPrivateAddresses: true,
      lookup: dns,
    });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/` })).toEqual(
      toolError(
        `127.0.0.1:${server.port} is not on the http_fetch allow-list, so it was not contacted. ` +
          'Allowed hosts: docs.example.com, *.example.org (*.domain means its subdomains). ' +
          'An operator can add hosts to the allow-list.',
      ),
    );
    expect(messageOf(await call(tool, { url: `http://other.test:${server.port}/` }))).toMatch(
      /^other\.test:\d+ is not on the http_fetch allow-list/,
    );
    expect(server.received).toEqual([]);
    expect(dns.asked).toEqual([]);
  });

  it('matches *.domain against subdomains only, not the domain or look-alike names', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'ok'));
    const names = [
      'docs.example.com',
      'a.b.example.com',
      'evil-example.com',
      'example.com',
      'example.com.evil.test',
    ];
    const dns = fakeDns(Object.fromEntries(names.map((name) => [name, ['127.0.0.1']])));
    const tool = fetchTool({ allowHosts: ['*.example.com'], allowPrivateAddresses: true, lookup: dns });
    const outcomes: Record<string, boolean> = {};
    for (const name of names) {
      outcomes[name] = (await call(tool, { url: `http://${name}:${server.port}/` })).ok;
    }
    expect(outcomes).toEqual({
      'docs.example.com': true,
      'a.b.example.com': true,
      'evil-example.com': false,
      'example.com': false,
      'example.com.evil.test': false,
    });
    expect(server.received.map((request) => request.headers.host)).toEqual([
      `docs.example.com:${server.port}`,
      `a.b.example.com:${server.port}`,
    ]);
  });

  it('matches hosts case-insensitively and internationalised names by their punycode form', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'ok'));
    const dns = fakeDns({ 'xn--bcher-kva.example': ['127.0.0.1'] });
    const tool = fetchTool({ allowHosts: ['Bücher.Example'], allowPrivateAddresses: true, lookup: dns });
    expect(await call(tool, { url: `http://BÜCHER.example:${server.port}/` })).toMatchObject({ ok: true });
    expect(dns.asked).toEqual(['xn--bcher-kva.example']);
  });

  it('limits a host:port entry to that port', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'ok'));
    const other = await freePort();
    const tool = fetchTool({ allowHosts: [`127.0.0.1:${server.port}`], allowPrivateAddresses: true });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/` })).toMatchObject({ ok: true });
    expect(messageOf(await call(tool, { url: `http://127.0.0.1:${other}/` }))).toContain(
      `127.0.0.1:${other} is not on the http_fetch allow-list`,
    );
  });

  it('refuses URLs that are not http(s), carry credentials or do not parse', async () => {
    const server = await startServer(answering(200, {}, 'no'));
    const tool = fetchTool({ allowPrivateAddresses: true });
    expect(await call(tool, { url: 'file:///etc/passwd' })).toEqual(
      toolError('Only http and https URLs can be fetched, not file:'),
    );
    expect(await call(tool, { url: `ftp://127.0.0.1:${server.port}/` })).toEqual(
      toolError('Only http and https URLs can be fetched, not ftp:'),
    );
    expect(await call(tool, { url: `http://user:secret@127.0.0.1:${server.port}/` })).toEqual(
      toolError('URLs with a user name or password are refused: http_fetch does not send credentials.'),
    );
    expect(await call(tool, { url: '/relative/path' })).toEqual(
      toolError('"/relative/path" is not an absolute URL; give one like https://example.com/page'),
    );
    expect(server.received).toEqual([]);
  });

  it('refuses loopback targets in every spelling when private addresses are not allowed', async () => {
    const server = await startServer(answering(200, {}, 'must not be reached'));
    const port = server.port;
    const tool = fetchTool({ allowHosts: ['127.0.0.1', '[::1]', 'localhost', '[::ffff:127.0.0.1]'] });
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://2130706433:${port}/`,
      `http://127.1:${port}/`,
      `http://0177.0.0.1:${port}/`,
    ]) {
      expect(await call(tool, { url }), url).toEqual(toolError(`127.0.0.1 is ${PRIVATE_REFUSAL}`));
    }
    expect(messageOf(await call(tool, { url: `http://[::1]:${port}/` }))).toBe(
      '::1 is not a public internet address (loopback, ::1/128); http_fetch does not connect to loopback, ' +
        'private or link-local networks. An operator can allow them with the http_fetch setting allowPrivateAddresses.',
    );
    expect(messageOf(await call(tool, { url: `http://[::ffff:127.0.0.1]:${port}/` }))).toContain(
      '::ffff:7f00:1 is not a public internet address (loopback, 127.0.0.0/8, as IPv4-mapped IPv6)',
    );
    // The real resolver: localhost is loopback whichever family it answers with first.
    expect(messageOf(await call(tool, { url: `http://localhost:${port}/` }))).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1), which is not a public internet address \(loopback/,
    );
    expect(server.received).toEqual([]);
  });

  it('refuses an allowed host name that resolves to a private address, before connecting (DNS rebinding)', async () => {
    const server = await startServer(answering(200, {}, 'must not be reached'));
    const dns = fakeDns({
      'rebind.test': ['127.0.0.1'],
      'mixed.test': ['93.184.215.14', '10.0.0.7'],
      'metadata.test': ['::ffff:169.254.169.254'],
      'unique-local.test': ['fd00::1'],
    });
    const tool = fetchTool({
      allowHosts: ['rebind.test', 'mixed.test', 'metadata.test', 'unique-local.test'],
      lookup: dns,
    });
    expect(await call(tool, { url: `http://rebind.test:${server.port}/` })).toEqual(
      toolError(`rebind.test resolves to 127.0.0.1, which is ${PRIVATE_REFUSAL}`),
    );
    expect(messageOf(await call(tool, { url: `http://mixed.test:${server.port}/` }))).toContain(
      'mixed.test resolves to 10.0.0.7, which is not a public internet address (private, 10.0.0.0/8)',
    );
    expect(messageOf(await call(tool, { url: `http://metadata.test:${server.port}/` }))).toContain(
      '(link-local (cloud metadata lives here), 169.254.0.0/16, as IPv4-mapped IPv6)',
    );
    expect(messageOf(await call(tool, { url: `http://unique-local.test:${server.port}/` }))).toContain(
      '(unique-local (private), fc00::/7)',
    );
    expect(server.received).toEqual([]);
  });

  it('follows redirects within the allow-list, checking every hop and dropping the headers at a new host', async () => {
    const final = await startServer(answering(200, { 'content-type': 'text/plain' }, 'arrived'));
    const first = await startServer((request, response) => {
      const location = request.url === '/start' ? '/next' : `http://b.test:${final.port}/final`;
      response.writeHead(request.url === '/start' ? 302 : 301, { location });
      response.end('moved');
    });
    const dns = fakeDns({ 'a.test': ['127.0.0.1'], 'b.test': ['127.0.0.1'] });
    const tool = fetchTool({ allowHosts: ['a.test', 'b.test'], allowPrivateAddresses: true, lookup: dns });
    const observation = await call(tool, {
      url: `http://a.test:${first.port}/start`,
      headers: [{ name: 'X-Trace', value: 'abc' }],
    });
    expect(observation).toEqual(
      ok(
        'HTTP 200 OK\nContent-Type: text/plain\n' +
          `URL: http://b.test:${final.port}/final (after 2 redirects)\n\narrived`,
      ),
    );
    expect(dns.asked).toEqual(['a.test', 'a.test', 'b.test']);
    expect(first.received.map((request) => [request.url, request.headers['x-trace']])).toEqual([
      ['/start', 'abc'],
      ['/next', 'abc'],
    ]);
    expect(final.received.map((request) => [request.url, request.headers['x-trace']])).toEqual([
      ['/final', undefined],
    ]);
  });

  it('refuses a redirect to a host that is not allowed, and never contacts that host', async () => {
    const forbidden = await startServer(answering(200, {}, 'secret'));
    const targets = [
      `http://b.test:${forbidden.port}/secret`,
      `http://127.0.0.1:${forbidden.port}/secret`,
      'file:///etc/passwd',
      `http://user:pw@a.test:${forbidden.port}/`,
    ];
    const redirecting = await startServer((request, response) => {
      response.writeHead(307, { location: targets[Number(request.url?.slice(1))] });
      response.end();
    });
    const dns = fakeDns({ 'a.test': ['127.0.0.1'], 'b.test': ['127.0.0.1'] });
    const tool = fetchTool({ allowHosts: ['a.test'], allowPrivateAddresses: true, lookup: dns });
    const messages: string[] = [];
    for (let index = 0; index < targets.length; index += 1) {
      messages.push(messageOf(await call(tool, { url: `http://a.test:${redirecting.port}/${index}` })));
    }
    const from = (index: number): string => `http://a.test:${redirecting.port}/${index} redirected to`;
    expect(messages).toEqual([
      `${from(0)} http://b.test:${forbidden.port}/secret. b.test:${forbidden.port} is not on the http_fetch allow-list, so it was not contacted. ` +
        'Allowed hosts: a.test (*.domain means its subdomains). An operator can add hosts to the allow-list.',
      `${from(1)} http://127.0.0.1:${forbidden.port}/secret. 127.0.0.1:${forbidden.port} is not on the http_fetch allow-list, so it was not contacted. ` +
        'Allowed hosts: a.test (*.domain means its subdomains). An operator can add hosts to the allow-list.',
      `${from(2)} file:///etc/passwd. Only http and https URLs can be fetched, not file:`,
      `${from(3)} http://user:pw@a.test:${forbidden.port}/. URLs with a user name or password are refused: http_fetch does not send credentials.`,
    ]);
    expect(forbidden.received).toEqual([]);
    expect(dns.asked).toEqual(['a.test', 'a.test', 'a.test', 'a.test']);
  });

  it('stops a redirect loop at maxRedirects', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(302, { location: '/loop' });
      response.end();
    });
    const tool = fetchTool({ allowPrivateAddresses: true, maxRedirects: 3 });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/loop` })).toEqual(
      toolError(
        `Stopped after 3 redirects, the limit; http://127.0.0.1:${server.port}/loop redirected again, to /loop.`,
      ),
    );
    expect(server.received).toHaveLength(4);
  });

  it('cuts a response over the size limit and stops reading it', async () => {
    const closed = deferred();
    const chunk = 'a'.repeat(16 * 1024);
    // An endless body: the test can only finish if the tool stops reading and closes the connection.
    const server = await startServer((_request, response) => {
      response.on('close', () => closed.resolve());
      response.on('error', () => undefined);
      response.writeHead(200, { 'content-type': 'text/plain' });
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const tool = fetchTool({
      allowPrivateAddresses: true,
      maxResponseBytes: 50_000,
      outputCharLimit: 60_000,
    });
    const output = outputOf(await call(tool, { url: `http://127.0.0.1:${server.port}/endless` }));
    const header =
      'HTTP 200 OK\nContent-Type: text/plain\n' +
      'Note: the response is larger than 50000 bytes; only the first 50000 bytes were read.\n\n';
    expect(output.slice(0, header.length)).toBe(header);
    const body = output.slice(header.length);
    expect(body.length).toBe(50_000);
    expect(body.replaceAll('a', '')).toBe('');
    await closed.promise;
  });

  it('decompresses gzip and applies the size limit to the decompressed bytes', async () => {
    const server = await startServer(
      answering(
        200,
        { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
        gzipSync('x'.repeat(1_000_000)),
      ),
    );
    const tool = fetchTool({ allowPrivateAddresses: true, maxResponseBytes: 1_000 });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/` })).toEqual(
      ok(
        'HTTP 200 OK\nContent-Type: text/plain\n' +
          'Note: the response is larger than 1000 bytes; only the first 1000 bytes were read.\n\n' +
          'x'.repeat(1_000),
      ),
    );
    expect(server.received[0]!.headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('stops a request that gets no answer within timeoutSeconds and closes the connection', async () => {
    const closed = deferred();
    const server = await startServer((request) => request.socket.once('close', () => closed.resolve()));
    const tool = fetchTool({ allowPrivateAddresses: true, timeoutSeconds: 0.2 });
    const url = `http://127.0.0.1:${server.port}/slow`;
    expect(await call(tool, { url })).toEqual(
      toolError(`No complete response from ${url} within 0.2 seconds; the request was stopped.`),
    );
    await closed.promise;
  });

  it('aborts the request when the call is cancelled from outside', async () => {
    const arrived = deferred();
    const closed = deferred();
    const server = await startServer((request) => {
      request.socket.once('close', () => closed.resolve());
      arrived.resolve();
    });
    const tool = fetchTool({ allowPrivateAddresses: true });
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const pending = call(tool, { url: `http://127.0.0.1:${server.port}/` }, { signal: controller.signal });
    // Raced with the call: should it end before the request arrives, the test fails with its outcome.
    await Promise.race([arrived.promise, pending]);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await closed.promise;
    expect(server.received).toHaveLength(1);
  });

  it('turns HTML into readable text', async () => {
    const html = `<!DOCTYPE html>
<html><head><title>Release notes</title>
<style>body { color: red }</style>
<script>if (a < b) { document.write("<p>injected</p>") }</script></head>
<body>
  <nav><a href="/">Home</a></nav>
  <h1>Version&nbsp;2 &amp; more</h1>
  <p>Faster   <b>builds</b>,
     fewer &lt;bugs&gt; &#8212; and caf&eacute; &#x1F600;.</p>
  <ul><li>One</li><li>Two</li></ul>
  <pre>
if (x) {
  return 1;
}</pre>
  <!-- a comment <p>hidden</p> -->
  <noscript>Enable JavaScript</noscript>
  <p title="a > b">Done<br>bye</p>
</body></html>`;
    const server = await startServer(answering(200, { 'content-type': 'text/html; charset=utf-8' }, html));
    const tool = fetchTool({ allowPrivateAddresses: true });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/notes` })).toEqual(
      ok(
        'HTTP 200 OK\nContent-Type: text/html; charset=utf-8\n\n' +
          'Release notes\nHome\n\n# Version 2 & more\n\nFaster builds, fewer <bugs> — and caf&eacute; 😀.\n\n' +
          '- One\n- Two\n\nif (x) {\n  return 1;\n}\n\nDone\nbye',
      ),
    );
  });

  it('returns JSON as it is, whatever the status', async () => {
    const server = await startServer(
      answering(404, { 'content-type': 'application/json' }, '{"error": "nope"}'),
    );
    const tool = fetchTool({ allowPrivateAddresses: true });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/missing` })).toEqual(
      ok('HTTP 404 Not Found\nContent-Type: application/json\n\n{"error": "nope"}'),
    );
  });

  it('decodes the charset the response declares', async () => {
    const server = await startServer(
      answering(
        200,
        { 'content-type': 'text/plain; charset=ISO-8859-1' },
        Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      ),
    );
    const tool = fetchTool({ allowPrivateAddresses: true });
    expect(outputOf(await call(tool, { url: `http://127.0.0.1:${server.port}/` }))).toMatch(/\n\ncafé$/);
  });

  it('refuses binary content with a notice, without reading it', async () => {
    const server = await startServer(
      answering(
        200,
        { 'content-type': 'image/png', 'content-length': '4' },
        Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      ),
    );
    const plain = await startServer(
      answering(200, { 'content-type': 'text/plain' }, Buffer.from([0x41, 0, 0x42])),
    );
    const tool = fetchTool({ allowPrivateAddresses: true });
    const url = `http://127.0.0.1:${server.port}/logo.png`;
    expect(await call(tool, { url })).toEqual(
      toolError(
        `${url} answered HTTP 200 OK with Content-Type image/png (4 bytes), which is not text; ` +
          'http_fetch returns text only (HTML, JSON, XML, plain text), so the body was not read.',
      ),
    );
    expect(await call(tool, { url: `http://127.0.0.1:${plain.port}/` })).toEqual(
      toolError(
        'The response is binary (it contains NUL bytes) although its Content-Type is text/plain; http_fetch returns text only',
      ),
    );
  });

  it('treats a response without a Content-Type as text, unless it holds NUL bytes', async () => {
    const server = await startServer((request, response) => {
      response.end(
        request.url === '/text' ? 'plain words' : Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]),
      );
    });
    const tool = fetchTool({ allowPrivateAddresses: true });
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/text` })).toEqual(
      ok('HTTP 200 OK\nContent-Type: (none)\n\nplain words'),
    );
    expect(await call(tool, { url: `http://127.0.0.1:${server.port}/archive` })).toEqual(
      toolError('The response is binary (it contains NUL bytes); http_fetch returns text only'),
    );
  });

  it('cuts long text to outputCharLimit and says so', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'y'.repeat(5_000)));
    const tool = fetchTool({ allowPrivateAddresses: true, outputCharLimit: 1_000 });
    const output = outputOf(await call(tool, { url: `http://127.0.0.1:${server.port}/` }));
    expect(output.length).toBeLessThanOrEqual(1_000);
    expect(output).toMatch(
      /^HTTP 200 OK\nContent-Type: text\/plain\nNote: the text is 5000 characters; only the first (\d+) are shown\.\n\ny+$/,
    );
    const shown = Number(/only the first (\d+)/.exec(output)![1]);
    expect(output.endsWith(`\n\n${'y'.repeat(shown)}`)).toBe(true);
    expect(shown).toBeGreaterThan(850);
  });

  it('refuses POST unless an operator allowed it, and a body without POST', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'posted'));
    const tool = fetchTool({ allowPrivateAddresses: true });
    const url = `http://127.0.0.1:${server.port}/items`;
    expect(await call(tool, { url, method: 'POST', body: '{}' })).toEqual(
      toolError('POST is not enabled for http_fetch; use GET, or ask an operator to allow POST.'),
    );
    const posting = fetchTool({ allowPrivateAddresses: true, allowPost: true });
    expect(await call(posting, { url, body: 'x' })).toEqual(toolError('A body can only be sent with POST.'));
    expect(server.received).toEqual([]);
  });

  it('sends an allowed POST with its body once, however often the call is retried', async () => {
    const server = await startServer(answering(201, { 'content-type': 'application/json' }, '{"id": 7}'));
    const tool = fetchTool({ allowPrivateAddresses: true, allowPost: true });
    const store = new MemoryIdempotencyStore();
    const args = {
      url: `http://127.0.0.1:${server.port}/items`,
      method: 'POST',
      headers: [{ name: 'Content-Type', value: 'application/json' }],
      body: '{"name": "widget"}',
    };
    const expected = ok('HTTP 201 Created\nContent-Type: application/json\n\n{"id": 7}');
    expect(await call(tool, args, {}, store)).toEqual(expected);
    expect(await call(tool, args, {}, store)).toEqual(expected);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ method: 'POST', url: '/items', body: '{"name": "widget"}' });
    expect(server.received[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': '18',
    });
  });

  it('continues a POST as a GET after 303 and keeps it (with its body) after 307', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/see-other') response.writeHead(303, { location: '/result' });
      else if (request.url === '/temporary') response.writeHead(307, { location: '/result' });
      else response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(request.method);
    });
    const tool = fetchTool({ allowPrivateAddresses: true, allowPost: true });
    const base = `http://127.0.0.1:${server.port}`;
    const headers = [{ name: 'Content-Type', value: 'text/plain' }];
    expect(
      outputOf(await call(tool, { url: `${base}/see-other`, method: 'POST', headers, body: 'b' })),
    ).toMatch(/\n\nGET$/);
    expect(
      outputOf(await call(tool, { url: `${base}/temporary`, method: 'POST', headers, body: 'b' })),
    ).toMatch(/\n\nPOST$/);
    expect(
      server.received.map(({ method, url, body, headers: sent }) => [
        method,
        url,
        body,
        sent['content-type'],
      ]),
    ).toEqual([
      ['POST', '/see-other', 'b', 'text/plain'],
      ['GET', '/result', '', undefined],
      ['POST', '/temporary', 'b', 'text/plain'],
      ['POST', '/result', 'b', 'text/plain'],
    ]);
  });

  it('refuses credential, hop-by-hop and proxy headers, and passes other headers on', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'ok'));
    const tool = fetchTool({ allowPrivateAddresses: true });
    const url = `http://127.0.0.1:${server.port}/`;
    const refusals: Array<[string, string]> = [
      ['Authorization', 'Authorization cannot be set: http_fetch does not send credentials'],
      ['cookie', 'cookie cannot be set: http_fetch does not send credentials'],
      ['Proxy-Authorization', 'Proxy-Authorization cannot be set: http_fetch does not send credentials'],
      ['Host', 'Host cannot be set: http_fetch sets it itself'],
      ['Connection', 'Connection cannot be set: http_fetch sets it itself'],
      ['Transfer-Encoding', 'Transfer-Encoding cannot be set: http_fetch sets it itself'],
      ['Content-Length', 'Content-Length cannot be set: http_fetch sets it itself'],
      ['Upgrade', 'Upgrade cannot be set: http_fetch sets it itself'],
      ['X-Forwarded-For', 'X-Forwarded-For cannot be set: it claims to come from a proxy'],
    ];
    for (const [name, message] of refusals) {
      expect(await call(tool, { url, headers: [{ name, value: 'x' }] }), name).toEqual(
        toolError(`Header ${message}`),
      );
    }
    expect(await call(tool, { url, headers: [{ name: 'X-Note', value: 'a\r\nHost: evil.test' }] })).toEqual(
      toolError('Header X-Note has a line break or NUL in its value'),
    );
    expect(await call(tool, { url, headers: [{ name: 'Bad Name', value: 'x' }] })).toEqual(
      toolError('Header name "Bad Name" is not a valid HTTP token'),
    );
    expect(server.received).toEqual([]);

    const headers = [
      { name: 'Accept', value: 'application/json' },
      { name: 'X-Request-Id', value: 'r-1' },
    ];
    expect(await call(tool, { url, headers })).toMatchObject({ ok: true });
    expect(server.received[0]!.headers).toMatchObject({ accept: 'application/json', 'x-request-id': 'r-1' });
  });

  it('refuses headers that override the method, rewrite the URL or host, or spoof the client, however spelled', async () => {
    const server = await startServer(answering(200, { 'content-type': 'text/plain' }, 'ok'));
    const tool = fetchTool({ allowPrivateAddresses: true });
    const url = `http://127.0.0.1:${server.port}/`;
    const method = 'it overrides the request method, which http_fetch decides';
    const rewrite = 'it asks the server to act on another URL or host than the one fetched';
    const proxy = 'it claims to come from a proxy';
    const refusals: Array<[string, string]> = [
      ['X-HTTP-Method-Override', method],
      ['X-HTTP-Method', method],
      ['x-method-override', method],
      ['X_HTTP_Method_Override', method],
      ['X-Original-URL', rewrite],
      ['X-Rewrite-URL', rewrite],
      ['X-Original-URI', rewrite],
      ['X_Original_URL', rewrite],
      ['X-Host', rewrite],
      ['X-Original-Host', rewrite],
      ['X-Forwarded-Host', proxy],
      ['X-Forwarded-Prefix', proxy],
      ['X_Forwarded_For', proxy],
      ['Forwarded', proxy],
      ['X-Real-IP', proxy],
      ['X-Client-IP', proxy],
      ['True-Client-IP', proxy],
      ['CF-Connecting-IP', proxy],
    ];
    for (const [name, reason] of refusals) {
      expect(await call(tool, { url, headers: [{ name, value: 'DELETE' }] }), name).toEqual(
        toolError(`Header ${name} cannot be set: ${reason}`),
      );
    }
    expect(server.received).toEqual([]);
    expect(await call(tool, { url, headers: [{ name: 'X-Method', value: 'a' }] })).toMatchObject({
      ok: true,
    });
  });

  it('speaks TLS to the pinned address with the host name for SNI, and verifies the certificate', async () => {
    const names: string[] = [];
    const requests: string[] = [];
    const server = https.createServer(
      {
        ...SELF_SIGNED,
        SNICallback: (name, done) => {
          names.push(name);
          done(null, undefined);
        },
      },
      (request, response) => {
        requests.push(request.url ?? '');
        response.end('unverified');
      },
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const dns = fakeDns({ 'secure.test': ['127.0.0.1'] });
    const tool = fetchTool({ allowHosts: ['secure.test'], allowPrivateAddresses: true, lookup: dns });
    expect(await call(tool, { url: `https://secure.test:${port}/` })).toEqual(
      toolError(
        `Could not fetch https://secure.test:${port}/: its TLS certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT).`,
      ),
    );
    expect(names).toEqual(['secure.test']);
    expect(requests).toEqual([]);
  });

  it('reports a refused connection and an unresolvable host as tool errors', async () => {
    const port = await freePort();
    const dns = fakeDns({});
    const tool = fetchTool({
      allowHosts: ['127.0.0.1', 'nowhere.test'],
      allowPrivateAddresses: true,
      lookup: dns,
    });
    expect(await call(tool, { url: `http://127.0.0.1:${port}/` })).toEqual(
      toolError(`Could not fetch http://127.0.0.1:${port}/: the connection was refused (ECONNREFUSED).`),
    );
    expect(await call(tool, { url: 'http://nowhere.test/' })).toEqual(
      toolError('Could not resolve nowhere.test (ENOTFOUND)'),
    );
  });
});
