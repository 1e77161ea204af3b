import { AGENT_LABELS } from './concurrency.js';
import { bytesPerStep, KEEL_TO_AGENTS_GOAL, loadText, LOOP_TURNS } from './per-step-result.js';
import type { ServerLoadMean } from './support/metrics.js';
import type { SuiteReport } from './suite.js';
import type { Distribution } from './support/stats.js';

type Cell = string | number | null | undefined;

function table(header: readonly string[], rows: readonly Cell[][]): string[] {
  const cell = (value: Cell): string =>
    // NaN becomes null once saved as JSON: both mean "not measured", whether live or re-rendered.
    value === undefined || value === null || (typeof value === 'number' && Number.isNaN(value))
      ? '–'
      : String(value);
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
    '',
  ];
}

/** The measured numbers of a report as Markdown tables (the generated part of BENCHMARKS.md). */
export function markdownTables(report: SuiteReport): string {
  const lines: string[] = [
    `Measured by \`${report.command}\` on ${report.startedAt.slice(0, 10)}: ${report.machine.cpus} × ` +
      `${report.machine.cpuModel}, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}, ` +
      `${report.wallSeconds} s for the whole command. Raw results: \`bench/results/*.json\`.`,
    '',
    // Saved reports from before the server was recorded have none.
    ...(report.server
      ? [
          `Server: ${report.server.startedByBench ? 'in-memory dev servers the bench started' : `the existing server at ${report.server.address}`} ` +
            `(Temporal ${report.server.version})${report.server.startedByBench ? '' : '; server CPU not measured (n/a)'}.`,
          '',
        ]
      : []),
  ];
  const perStep = report.results['per-step'];
  if (perStep) {
    const { turns, repetitions } = perStep.options;
    lines.push(
      `#### 1. Per-step overhead (${repetitions} runs of ${turns} turns per variant, interleaved)`,
      '',
      ...table(
        ['variant', 'ms/step median', 'mean', 'p95', 'ms/run median', 'worker CPU ms/step'],
        Object.values(perStep.variants).map((variant) => [
          variant.label,
          variant.stepMs.median,
          variant.stepMs.mean,
          variant.stepMs.p95,
          variant.runMs.median,
          variant.workerCpuMsPerStep,
        ]),
      ),
      ...table(
        ['ratio of ms/step', 'median', 'mean', 'p95', 'without workflow-task waits'],
        Object.entries(perStep.ratios).map(([name, value]) => [
          name === 'keel/agents' ? `${name} (goal ≤ ${KEEL_TO_AGENTS_GOAL}×)` : name,
          `${value.median}×`,
          `${value.mean}×`,
          `${value.p95}×`,
          value.busy === undefined ? undefined : `${value.busy}×`,
        ]),
      ),
      `A ${LOOP_TURNS}-turn agent loop's total overhead: each variant's ${LOOP_TURNS}-turn run minus the plain ` +
        `loop's run beside it (ms; ${perStep.options.loopRuns} pairs), beside Vercel Workflow's published ` +
        `figure for a 5-step loop (theirs, not measured here):`,
      '',
      ...table(
        ['variant', 'overhead median', 'mean', 'p95', 'Vercel Workflow, published'],
        Object.values(perStep.variants)
          .filter((variant) => variant.loop?.overheadMs !== undefined)
          .map((variant) => [
            variant.label,
            variant.loop!.overheadMs!.median,
            variant.loop!.overheadMs!.mean,
            variant.loop!.overheadMs!.p95,
            perStep.vercelLoopOverheadMs,
          ]),
      ),
      "History per step, and the dev server's own transfer-queue latencies from its Prometheus metrics " +
        "over the variant's measured runs: `task_latency_load`, the mean ms from a task's creation until " +
        "its history shard's queue reader loaded it, and in brackets `task_latency_queue`, until it was processed:",
      '',
      ...table(
        [
          'variant',
          'workflow tasks/step',
          'events/step',
          'bytes/step',
          'history of one run',
          'TransferActiveTaskWorkflowTask load ms (queue ms, tasks)',
          'TransferActiveTaskActivityTask load ms (queue ms, tasks)',
        ],
        Object.values(perStep.variants)
          .filter((variant) => variant.breakdown !== undefined)
          .map((variant) => [
            variant.label,
            variant.breakdown!.workflowTasksPerStep,
            variant.breakdown!.eventsPerStep,
            bytesPerStep(variant.breakdown!),
            variant.history ? `${variant.history.events} events, ${variant.history.bytes} bytes` : undefined,
            loadCell(variant.serverLoad?.workflowTask),
            loadCell(variant.serverLoad?.activityTask),
          ]),
      ),
    );
    for (const [name, why] of Object.entries(perStep.notMeasured ?? {}))
      lines.push(`${name} was not measured: ${why}.`, '');
    const temporal = Object.entries(perStep.variants).filter(
      ([, variant]) => variant.breakdown !== undefined,
    );
    const phases = [...new Set(temporal.flatMap(([, variant]) => Object.keys(variant.breakdown!.phasesMs)))];
    lines.push(
      'Where a step goes, from the histories (server timestamps, mean ms per step):',
      '',
      ...table(
        ['phase', ...temporal.map(([name]) => name)],
        [
          ...phases.map((phase) => [
            phase,
            ...temporal.map(([, variant]) => variant.breakdown!.phasesMs[phase]),
          ]),
          ['between events', ...temporal.map(([, variant]) => variant.breakdown!.unaccountedMs)],
          ['whole step', ...temporal.map(([, variant]) => variant.breakdown!.stepMs)],
          ['step without workflow-task waits', ...temporal.map(([, variant]) => variant.breakdown!.busyMs)],
          [
            'share of workflow tasks on the sticky queue',
            ...temporal.map(([, variant]) => variant.breakdown!.stickyShare),
          ],
        ],
      ),
    );
    const metricNames = [
      ...new Set(temporal.flatMap(([, variant]) => Object.keys(variant.workerMetrics ?? {}))),
    ];
    if (
      metricNames.some((name) =>
        temporal.some(([, variant]) => (variant.workerMetrics?.[name]?.count ?? 0) > 0),
      )
    ) {
      lines.push(
        "The in-process workers' own view (SDK metrics, mean ms):",
        '',
        ...table(
          ['worker metric', ...temporal.map(([name]) => name)],
          metricNames.map((name) => [
            name,
            ...temporal.map(([, variant]) => {
              const metric = variant.workerMetrics?.[name];
              return metric && metric.count > 0 ? `${metric.meanMs} (n=${metric.count})` : undefined;
            }),
          ]),
        ),
        ...table(
          ['server call (in-process variants)', 'mean ms', 'calls'],
          Object.entries(perStep.serverCalls).map(([name, value]) => [name, value.meanMs, value.count]),
        ),
      );
    }
  }
  const concurrency = report.results.concurrency;
  if (concurrency) {
    const { turns, modelLatencyMs } = concurrency.options;
    lines.push(
      `#### 2. Concurrency (${turns} turns per run, model latency ${modelLatencyMs} ms, ideal ${(turns * modelLatencyMs) / 1000} s)`,
      '',
      ...table(
        [
          'runs',
          'agent (own worker process)',
          'completed',
          'wall s',
          '× ideal',
          'steps/s (at saturation)',
          'worker CPU ms/step',
          'server CPU ms/step',
          'worker share of CPU',
          'worker RSS MiB ready → peak',
          'RSS MiB per cached run',
          'workflow task p95 ms',
          'activity p95 ms',
        ],
        concurrency.cases.map((entry) => [
          entry.runs,
          AGENT_LABELS[entry.agent],
          `${entry.completed}/${entry.runs}`,
          entry.wallSeconds,
          entry.overIdeal,
          `${entry.stepsPerSecond} (${entry.saturatedStepsPerSecond})`,
          entry.worker.cpuMsPerStep,
          entry.server?.cpuMsPerStep ?? 'n/a',
          entry.workerCpuShare ?? 'n/a',
          `${entry.worker.readyRssMiB} → ${entry.worker.peakRssMiB}`,
          entry.worker.rssPerRunMiB,
          entry.workflowTaskLatency.p95,
          entry.activityLatency.p95,
        ]),
      ),
    );
    if (concurrency.agentsUnavailable)
      lines.push(`The peer was not measured: ${concurrency.agentsUnavailable}.`, '');
  }
  const history = report.results.history;
  if (history) {
    lines.push(
      `#### 3. History economy (runs of ${history.options.turns} turns; continue-as-new extrapolated from the growth)`,
      '',
      ...table(
        [
          'conversation',
          'observation chars',
          'events/step',
          'bytes/step',
          'bytes of the last step',
          'suggested at turn (4,096 events)',
          'suggested at turn (4 MiB)',
          'measured: continued as new after turn',
        ],
        history.cases.map((entry) => [
          entry.conversation === 'chained' ? 'chained (previous_response_id)' : 'stateless (items resent)',
          entry.observationChars,
          entry.perStep.events,
          entry.perStep.bytes,
          entry.lastStepBytes,
          entry.turnsUntilSuggested.byEvents,
          entry.turnsUntilSuggested.byBytes,
          entry.continuedAsNewAtTurn,
        ]),
      ),
    );
    if (history.statelessUnavailable)
      lines.push(`Without \`previous_response_id\`: not measured: ${history.statelessUnavailable}.`, '');
  }
  const recovery = report.results.recovery;
  if (recovery) {
    lines.push(
      '#### 4. Recovery and cancellation',
      '',
      ...table(
        ['what', 'heartbeat timeout', 'median ms', 'max ms', 'samples'],
        [
          ...recovery.kills.flatMap((entry) => [
            recoveryRow(
              'SIGKILL → tool running again on the standby worker',
              entry.heartbeatTimeoutSeconds,
              entry.toolRestartedMs,
            ),
            recoveryRow(
              "SIGKILL → the run's next model turn",
              entry.heartbeatTimeoutSeconds,
              entry.runProgressedMs,
            ),
          ]),
          ...recovery.cancels.flatMap((entry) => [
            recoveryRow(
              "cancel request → tool's AbortSignal",
              entry.heartbeatTimeoutSeconds,
              entry.abortSignalMs,
            ),
            recoveryRow('cancel request → run Canceled', entry.heartbeatTimeoutSeconds, entry.runCanceledMs),
          ]),
        ],
      ),
    );
  }
  return lines.join('\n');
}

/** A task kind's load latency (queue latency, count); n/a on a server the bench did not start. */
function loadCell(load: ServerLoadMean | undefined): string {
  return load === undefined ? 'n/a' : loadText(load);
}

/** One row of the recovery table: what, at which heartbeat timeout, and its median, max and count. */
function recoveryRow(
  what: string,
  heartbeatTimeoutSeconds: number,
  measured: Distribution,
): Array<string | number> {
  return [what, `${heartbeatTimeoutSeconds} s`, measured.median, measured.max, measured.count];
}
