import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import {
  McpServers,
  mcpConfigSecrets,
  mcpToolName,
  mcpToolParameters,
  parseMcpServerConfigs,
} from '../../src/mcp/index.js';
import { toolResultText } from '../../src/mcp/tool-result.js';

function problems(value: unknown): string {
  try {
    parseMcpServerConfigs(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('parseMcpServerConfigs', () => {
  it('accepts stdio and Streamable HTTP servers', () => {
    expect(
      parseMcpServerConfigs([
        { name: 'fs', command: 'node', args: ['server.js'], env: { A: 'b' }, allowTools: ['read_file'] },
        {
          name: 'remote_api',
          url: 'https://mcp.example.com/mcp',
          headers: { Authorization: 'Bearer x' },
          needsApproval: true,
        },
      ]),
    ).toHaveLength(2);
  });

  it('names every problem at once, without echoing values', () => {
    const message = problems([
      { name: 'both', command: 'node', url: 'http://localhost/mcp' },
      { name: 'neither' },
      { name: 'bad__name', command: 'node' },
      { name: 'ftp', url: 'ftp://example.com/mcp' },
      { name: 'typo', command: 'node', allowtools: ['x'] },
      { name: 'slow', command: 'node', timeoutSeconds: 0 },
      { name: 'envy', command: 'node', env: { TOKEN: 12345 } },
      { name: 'fs', command: 'a' },
      { name: 'fs', command: 'b' },
    ]);
    expect(message).toContain(
      'mcpServers[0] (both): give either command (a stdio server) or url (a Streamable HTTP server), not both',
    );
    expect(message).toContain('mcpServers[1] (neither): give either command');
    expect(message).toMatch(/mcpServers\[2\] \(bad__name\)\.name: use letters and digits/);
    expect(message).toMatch(/mcpServers\[3\] \(ftp\)\.url: an http:\/\/ or https:\/\/ URL/);
    expect(message).toMatch(/mcpServers\[4\] \(typo\).*allowtools/);
    expect(message).toMatch(/mcpServers\[5\] \(slow\)\.timeoutSeconds/);
    expect(message).toMatch(/mcpServers\[6\] \(envy\)\.env\.TOKEN/);
    expect(message).not.toContain('12345');
    expect(message).toContain('mcpServers[8] (fs): the name fs is used by another server');
    expect(() => new McpServers([{ name: 'a b', command: 'x' }])).toThrow(ConfigError);
    expect(problems({ name: 'x', command: 'y' })).toContain('must be a list');
  });
});

describe('mcpToolName', () => {
  it('prefixes the server name, and refuses what cannot be a function name', () => {
    expect(mcpToolName('fs', 'read_file')).toBe('fs__read_file');
    expect(mcpToolName('fs', 'files.read')).toBeUndefined();
    expect(mcpToolName('fs', 'x'.repeat(61))).toBeUndefined();
    expect(mcpToolName('fs', 'x'.repeat(60))).toHaveLength(64);
  });
});

describe('mcpToolParameters', () => {
  it('makes a plain object schema strict: closed, all required, optional ones nullable, defaults described', () => {
    const result = mcpToolParameters({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { path: { type: 'string' }, depth: { type: 'integer', default: 2 } },
      required: ['path'],
    });
    expect(result.strict).toBe(true);
    expect(result.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string' },
        depth: { type: ['integer', 'null'], description: 'Default: 2.' },
      },
      required: ['path', 'depth'],
      additionalProperties: false,
    });
    expect(result.schema).not.toHaveProperty('$schema');
  });

  it('sends a schema strict mode cannot express as written, non-strict', () => {
    for (const [schema, why] of [
      [{ type: 'object', additionalProperties: { type: 'string' } }, /free-form keys/],
      [{ type: 'object', properties: { name: { type: 'string', minLength: 1 } } }, /minLength/],
      [{ type: 'object', properties: { tags: { type: 'array', items: [{ type: 'string' }] } } }, /tuples/],
      [{ type: 'object', properties: { at: { type: 'string', format: 'uri' } } }, /format 'uri'/],
      [{ type: 'object', properties: { x: { $ref: 'https://example.com/schema' } } }, /local references/],
      [{ anyOf: [{ type: 'object' }] }, /root/],
    ] as const) {
      const result = mcpToolParameters(schema);
      expect(result.strict).toBe(false);
      expect(result.parameters).toEqual(schema);
      expect(result.notStrictBecause).toMatch(why);
    }
  });
});

describe('mcpConfigSecrets', () => {
  it('collects secret-named env values, header values, bearer tokens and credentials in URLs and arguments', () => {
    const secrets = mcpConfigSecrets(
      parseMcpServerConfigs([
        {
          name: 'a',
          command: 'x',
          args: ['--db', 'postgres://app:dbpass123@db/app'],
          env: { LOG_LEVEL: 'debug', API_KEY: 'k-123456' },
        },
        {
          name: 'b',
          url: 'https://user:urlpass99@mcp.example.com/mcp?token=querytoken77',
          headers: { Authorization: 'Bearer tok-abcdef', 'X-Api-Key': 'hk-778899', 'X-Tenant': 'acme' },
        },
      ]),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'k-123456',
        'dbpass123',
        'Bearer tok-abcdef',
        'tok-abcdef',
        'hk-778899',
        'urlpass99',
        'querytoken77',
      ]),
    );
    // A setting with a plain name is not a secret: redacting `debug` everywhere would garble output.
    expect(secrets).not.toContain('debug');
    expect(secrets).not.toContain('acme');
  });
});

describe('toolResultText', () => {
  it('shows structured content when there are no content blocks, and embedded resources', () => {
    expect(toolResultText({ content: [], structuredContent: { temperature: 21 } })).toBe(
      '{"temperature":21}',
    );
    expect(
      toolResultText({
        content: [
          { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'inside' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA' } },
          { type: 'audio', data: 'AAAAAA==', mimeType: 'audio/wav' },
        ],
      }),
    ).toBe(
      '[resource <file:///a.txt> (text/plain)]\ninside\n[resource <file:///b.bin>: 3 bytes, not shown]\n[audio: audio/wav, 4 bytes, not shown]',
    );
    expect(toolResultText({ toolResult: { legacy: true } })).toBe('{"legacy":true}');
  });
});
