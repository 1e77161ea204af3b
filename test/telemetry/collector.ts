import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CliProcess } from '../support/cli.js';
import { freePort } from '../support/free-port.js';

const script = fileURLToPath(new URL('../../scripts/telemetry/collector.sh', import.meta.url));

/** One span as the collector's file exporter writes it (OTLP JSON). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, string | number | boolean | string[]>;
}

/** A real OpenTelemetry Collector on loopback: OTLP/HTTP in, every span written to a file. */
export class Collector {
  private constructor(
    readonly endpoint: string,
    private readonly process: CliProcess,
    private readonly file: string,
  ) {}

  /** Builds the collector once (cached by scripts/telemetry/collector.sh) and starts it. */
  static async start(): Promise<Collector> {
    const { stdout } = await promisify(execFile)('bash', [script], { maxBuffer: 1 << 20 });
    const binary = stdout.trim().split('\n').at(-1)!;
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-otelcol-'));
    const port = await freePort();
    const file = path.join(directory, 'spans.jsonl');
    const config = path.join(directory, 'config.yaml');
    await writeFile(
      config,
      [
        'receivers:',
        '  otlp:',
        '    protocols:',
        '      http:',
        `        endpoint: 127.0.0.1:${port}`,
        'exporters:',
        '  file:',
        `    path: ${file}`,
        'service:',
        '  telemetry:',
        '    metrics:',
        '      level: none',
        '  pipelines:',
        '    traces:',
        '      receivers: [otlp]',
        '      exporters: [file]',
        '',
      ].join('\n'),
    );
    const process = new CliProcess(
      spawn(binary, [`--config=${config}`], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    await process.waitForOutput('Everything is ready');
    return new Collector(`http://127.0.0.1:${port}`, process, file);
  }

  /** Stops the collector (which writes out what it holds) and returns every span it received. */
  async stop(): Promise<CollectedSpan[]> {
    this.process.child.kill('SIGTERM');
    await this.process.exited;
    const text = await readFile(this.file, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line) => parseRequest(JSON.parse(line) as OtlpTraces));
  }
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpTraces {
  resourceSpans?: Array<{
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: Array<{ key: string; value: OtlpValue }>;
      }>;
    }>;
  }>;
}

function value(raw: OtlpValue): string | number | boolean | string[] {
  if (raw.stringValue !== undefined) return raw.stringValue;
  if (raw.intValue !== undefined) return Number(raw.intValue);
  if (raw.doubleValue !== undefined) return raw.doubleValue;
  if (raw.boolValue !== undefined) return raw.boolValue;
  return (raw.arrayValue?.values ?? []).map((item) => String(value(item)));
}

function parseRequest(request: OtlpTraces): CollectedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
        name: span.name,
        attributes: Object.fromEntries(
          (span.attributes ?? []).map(({ key, value: raw }) => [key, value(raw)]),
        ),
      })),
    ),
  );
}
