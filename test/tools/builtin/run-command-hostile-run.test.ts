import { readFileSync } from 'node:fs';
import { realpath, rm } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunCommandTool } from '../../../src/tools/builtin/run-command.js';
import type { RunCommandOptions } from '../../../src/tools/builtin/run-command.js';
import { findCgroups } from '../../../src/tools/builtin/run-command/cgroups.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { deferred } from '../../support/deferred.js';
import { connectTestServer, temporaryWorkspace } from '../../support/harness.js';
import type { TestServer } from '../../support/harness.js';
import { withScenario } from '../../support/scenario.js';
import { reply } from '../../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const options: RunCommandOptions = {
  allow: ['sh', 'python3'],
  // Both the file bomb and the workspace bomb write to the workspace's filesystem, and each one's
  // watch counts the other's writes: the cap leaves the file bomb's 64 MB room for 12 of the
  // workspace bomb's 16 MB files, more than it writes while one dd writes 64 MB.
  limits: { memoryMb: 256, processes: 64, cpuSeconds: 3, fileMb: 64, tmpMb: 16, workspaceMb: 256 },
};

/**
 * One hostile command per limit. The memory bomb asks for 4 GiB and then holds it for 2 s, so a
 * limit that did not hold would show in the machine's memory however coarsely it is sampled.
 */
const hostile = {
  memory: `python3 -c "a=b'x'*(4*1024**3); import time; time.sleep(2)"`,
  processes: 'n=0; while [ $n -lt 500 ]; do sleep 30 & n=$((n + 1)); done; echo started $n',
  cpu: 'python3 -c "while True: pass"',
  file: 'dd if=/dev/zero of=big bs=1M count=100',
  tmp: `python3 -c "open('/tmp/fill', 'wb').write(b'x' * (40 * 1024**2))"`,
  workspace:
    'i=0; while [ $i -lt 100 ]; do dd if=/dev/zero of=part$i bs=1M count=16 status=none; i=$((i + 1)); sleep 0.02; done; echo wrote all',
} as const;

type Hostile = keyof typeof hostile;

/** The machine's MemAvailable, in MB. */
function memoryAvailableMb(): number {
  const match = /^MemAvailable:\s+(\d+) kB$/mu.exec(readFileSync('/proc/meminfo', 'utf8'));
  if (match === null) throw new Error('/proc/meminfo has no MemAvailable');
  return Number(match[1]) / 1024;
}

/** The tool outputs a request carries, by call id. */
function toolOutputs(request: RecordedRequest): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const item of request.body.input)
    if (item.type === 'function_call_output') outputs.set(String(item.call_id), String(item.output));
  return outputs;
}

/** Which run a request belongs to: its task names it, and its tool outputs carry the run's call ids. */
function runOf(request: RecordedRequest): 'hostile' | 'ordinary' {
  const callIds = [...toolOutputs(request).keys()];
  if (callIds.length > 0) return callIds.every((id) => id.startsWith('hostile_')) ? 'hostile' : 'ordinary';
  const input = JSON.stringify(request.body.input);
  if (input.includes('run-hostile')) return 'hostile';
  if (input.includes('run-ordinary')) return 'ordinary';
  throw new Error(`request ${request.index} belongs to no known run`);
}

/**
 * A hostile model runs a command against each of run_command's limits through a real worker, while
 * a second run on the same worker runs an ordinary command: the model is told which limit stopped
 * each, the ordinary run completes with its answer, and the machine keeps its memory.
 */
describe('run_command limits through a real worker', () => {
  it('tells a hostile model each limit it hit while an ordinary run on the same worker completes', async () => {
    const cgroups = await findCgroups();
    // The ordinary command is released when the hostile ones are issued, and the hostile run ends
    // only after the ordinary run has its observation: run 2 completes while run 1 is still running.
    const hostileIssued = deferred();
    const ordinaryObserved = deferred();
    const script = (request: RecordedRequest): ScriptStep => {
      const run = runOf(request);
      const observed = toolOutputs(request).size > 0;
      if (run === 'hostile' && !observed) {
        hostileIssued.resolve();
        return reply.calls(
          ...(Object.keys(hostile) as Hostile[]).map((name) => ({
            name: 'run_command',
            callId: `hostile_${name}`,
            arguments: { program: 'sh', args: ['-c', hostile[name]] },
          })),
        );
      }
      if (run === 'hostile') return reply.held(reply.text('the limits held'), ordinaryObserved.promise);
      if (!observed)
        return reply.held(
          reply.calls({
            name: 'run_command',
            callId: 'ordinary_python',
            // Through sh: a python3 found on the worker's PATH may lie outside what the sandbox shows (pyenv).
            arguments: { program: 'sh', args: ['-c', 'python3 -c "print(6*7)"'] },
          }),
          hostileIssued.promise,
        );
      ordinaryObserved.resolve();
      return reply.text('6 times 7 is 42');
    };

    const workspace = await realpath(await temporaryWorkspace());
    const tool = createRunCommandTool(options, await Workspace.open(workspace));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const availableAtStart = memoryAvailableMb();
    let lowestAvailable = availableAtStart;
    const sampler = setInterval(() => {
      lowestAvailable = Math.min(lowestAvailable, memoryAvailableMb());
    }, 100);
    let milliseconds = 0;
    let requests: RecordedRequest[];
    try {
      requests = await withScenario(server, script, { workspace, tools: [tool] }, async ({ keel, model }) => {
        delay.enable();
        const startedAt = Date.now();
        const [hostileRun, ordinaryRun] = await Promise.all([
          keel.startRun({ task: 'run-hostile: take the machine down' }),
          keel.startRun({ task: 'run-ordinary: what is 6 times 7?' }),
        ]);
        const [hostileResult, ordinaryResult] = await Promise.all([
          keel.waitForResult(hostileRun),
          keel.waitForResult(ordinaryRun),
        ]);
        milliseconds = Date.now() - startedAt;
        delay.disable();
        expect(hostileResult).toMatchObject({ status: 'completed', finalText: 'the limits held' });
        expect(ordinaryResult).toMatchObject({ status: 'completed', finalText: '6 times 7 is 42' });
        model.assertDone();
        return model.requests;
      });
    } finally {
      clearInterval(sampler);
      delay.disable();
      hostileIssued.resolve();
      ordinaryObserved.resolve();
      await rm(workspace, { recursive: true, force: true });
    }

    const observations = requests.filter((request) => toolOutputs(request).size > 0);
    const hostileRequest = observations.find((request) => runOf(request) === 'hostile');
    const ordinaryRequest = observations.find((request) => runOf(request) === 'ordinary');
    const seen = toolOutputs(hostileRequest!);
    const ordinary = toolOutputs(ordinaryRequest!).get('ordinary_python');
    const limitLines = [...seen.values()].flatMap((output) =>
      output.split('\n').filter((line) => line.startsWith('limit:') || line.includes('No space left')),
    );
    const issuedAt = requests.find((request) => runOf(request) === 'hostile')!.receivedAt;
    console.info(
      `[measure] hostile run_command run (cgroups ${cgroups.kind}): both runs ${milliseconds} ms; ` +
        `worker event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms; ` +
        `MemAvailable ${Math.round(availableAtStart)} MB at start, lowest ${Math.round(lowestAvailable)} MB ` +
        `(drop ${Math.round(availableAtStart - lowestAvailable)} MB, memory limit ${options.limits?.memoryMb} MB); ` +
        `ordinary observation ${ordinaryRequest!.receivedAt - issuedAt} ms after the hostile calls were issued, ` +
        `hostile observations ${hostileRequest!.receivedAt - issuedAt} ms after; the hostile model saw: ${JSON.stringify(limitLines)}`,
    );

    expect(ordinary).toContain('exit code: 0');
    expect(ordinary).toMatch(/^42$/mu);
    expect([...seen.keys()].sort()).toEqual(
      Object.keys(hostile)
        .map((name) => `hostile_${name}`)
        .sort(),
    );
    if (cgroups.kind === 'none') {
      // Per process only: the address-space limit refuses the gigabyte.
      expect(seen.get('hostile_memory')).toContain('MemoryError');
    } else {
      expect(seen.get('hostile_memory')).toContain(
        'limit: a process was killed for going over the memory limit of 256 MB for the whole command (KEEL_RUN_COMMAND_MEMORY_MB)',
      );
      expect(seen.get('hostile_processes')).toContain(
        'limit: a process or thread could not start: the command reached its limit of 64 at once (KEEL_RUN_COMMAND_PROCESSES)',
      );
    }
    expect(seen.get('hostile_processes')).not.toContain('started 500');
    expect(seen.get('hostile_cpu')).toContain(
      'limit: it was stopped for using more than 3 s of CPU time (KEEL_RUN_COMMAND_CPU_SECONDS)',
    );
    expect(seen.get('hostile_file')).toContain(
      'limit: it was stopped for writing a file larger than 64 MB (KEEL_RUN_COMMAND_FILE_MB)',
    );
    expect(seen.get('hostile_tmp')).toContain('No space left on device');
    expect(seen.get('hostile_workspace')).toContain(
      "limit: it was stopped for growing the workspace's disk use by more than 256 MB while it ran (KEEL_RUN_COMMAND_WORKSPACE_MB)",
    );
    expect(seen.get('hostile_workspace')).not.toContain('wrote all');
    // The bomb asks for 4 GiB: half of that is room for whatever else the machine does meanwhile.
    expect(availableAtStart - lowestAvailable).toBeLessThan(2048);
  }, 120_000);
});
