import { SimplePlugin } from '@temporalio/plugin';
import type { ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Runtime } from '@temporalio/worker';
import type { InjectedSink, InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { approvalsWaiting, KeelActivityTelemetry } from './activity-interceptor.js';
import type { KeelTelemetryOptions } from './activity-interceptor.js';
import type { Tracing } from './tracing.js';
import { KEEL_METRICS } from './names.js';
import type { KeelMetricsSinks } from './names.js';
import { workflowInterceptorModules } from './workflow-interceptor-modules.js';

/** The workflow span sink when tracing is off: the bundle's interceptors still end spans; they are dropped. */
const droppingExporter: InjectedSink<OpenTelemetryWorkflowExporter> = {
  export: { fn: () => undefined },
};

/**
 * Tracing and Keel's metrics on a worker. Always: the workflow interceptor modules (bundled when the
 * worker bundles; the prebuilt bundle holds them already) and Keel's activity interceptor, which
 * counts tokens, cost, latency and tool outcomes on the SDK's meter. With `tracing`: Temporal's
 * activity interceptors, which continue the workflow's trace from the task's headers, around Keel's
 * spans, and the sink that exports the workflow's spans; without, a sink that drops them.
 */
export class KeelTelemetryPlugin extends SimplePlugin {
  readonly #tracing: Tracing | undefined;

  constructor(options: KeelTelemetryOptions & { tracing?: Tracing }) {
    const { tracing, ...keel } = options;
    super({
      name: 'keel-telemetry',
      workerInterceptors: {
        workflowModules: [...workflowInterceptorModules],
        // Temporal's span first, so Keel's `chat` and `execute_tool` spans are its children.
        activity: [
          ...(tracing ? [tracing.activityInterceptors] : []),
          (context) => ({ inbound: new KeelActivityTelemetry(context, keel) }),
        ],
      },
    });
    this.#tracing = tracing;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    return super.configureWorker({
      ...options,
      sinks: { ...options.sinks, exporter: this.#exporter(), ...keelMetricsSinks(options.taskQueue) },
    });
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return super.configureReplayWorker({
      ...options,
      sinks: { ...options.sinks, exporter: this.#exporter(), ...keelMetricsSinks('replay') },
    });
  }

  #exporter(): InjectedSink<OpenTelemetryWorkflowExporter> {
    if (!this.#tracing) return droppingExporter;
    const inner = this.#tracing.workflowExporter();
    // The SDK copies the whole WorkflowInfo onto each workflow span, memo and last failure included:
    // only the fields that name the run go on.
    return { export: { ...inner.export, fn: (info, spans) => inner.export.fn(namingFields(info), spans) } };
  }
}

/** Where the workflow interceptor's approval decisions are counted: the runtime's meter. */
function keelMetricsSinks(taskQueue: string): InjectedSinks<KeelMetricsSinks> {
  return {
    keelMetrics: {
      approvalDecided: {
        fn: (_info, decision) => {
          approvalsWaiting(taskQueue).add(-1);
          const { name, description } = KEEL_METRICS.approvalsDecided;
          Runtime.instance()
            .metricMeter.createCounter(name, '', description)
            .add(1, { task_queue: taskQueue, decision });
        },
      },
    },
  };
}

/** The WorkflowInfo fields workflow spans carry: which run, where; nothing the run wrote. */
function namingFields(info: WorkflowInfo): WorkflowInfo {
  const { workflowId, runId, workflowType, taskQueue, namespace, attempt, firstExecutionRunId } = info;
  return {
    workflowId,
    runId,
    workflowType,
    taskQueue,
    namespace,
    attempt,
    firstExecutionRunId,
  } as WorkflowInfo;
}
