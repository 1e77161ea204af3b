import { KEEL_SERVER_DYNAMIC_CONFIG } from '../src/server-settings.js';
import type { PerStepOptions } from './per-step-result.js';
import {
  agentsVariant,
  bundleWhatIf,
  distVariant,
  keelInProcessVariant,
  plainVariant,
  whatIfVariant,
} from './per-step-variants.js';
import type { Variant } from './per-step-variants.js';
import { openEnvironment } from './support/environment.js';
import type { BenchEnvironment } from './support/environment.js';

/** Starts variants one after the other; if one fails to start, stops those already started. */
async function inSequence(starts: ReadonlyArray<() => Promise<Variant>>): Promise<Variant[]> {
  const started: Variant[] = [];
  try {
    for (const start of starts) started.push(await start());
    return started;
  } catch (error) {
    for (const variant of started.reverse()) await variant.stop();
    throw error;
  }
}

/**
 * Starts a dev server with `dynamicConfig` and the variants `make` puts on it; the server stops with
 * the first of them, which stops last (or at once, when there are none).
 */
async function onServer(
  environment: BenchEnvironment,
  dynamicConfig: Record<string, unknown>,
  say: (line: string) => void,
  make: (server: BenchEnvironment) => Promise<Variant[]>,
): Promise<Variant[]> {
  const server = await openEnvironment({
    kind: 'start',
    dynamicConfig,
    keelBundlePath: environment.keelBundle.codePath,
    built: environment.built,
    say,
  });
  let made: Variant[];
  try {
    made = await make(server);
  } catch (error) {
    await server.close();
    throw error;
  }
  // Variants stop in reverse order of start, so the first of the group stops last: the server
  // closes with it, after every worker that polls it.
  const [first, ...rest] = made;
  if (first === undefined) {
    await server.close();
    return [];
  }
  const stop = async (): Promise<void> => {
    await first.stop();
    await server.close();
  };
  return [{ ...first, stop }, ...rest];
}

/**
 * Starts every variant the options ask for, the independent ones at once (worker processes and dev
 * servers take seconds to start; nothing is measured until all are up), in a fixed order.
 */
export async function startVariants(
  environment: BenchEnvironment,
  options: PerStepOptions,
  modelUrl: string,
  notMeasured: Record<string, string>,
  say: (line: string) => void,
): Promise<Variant[]> {
  const existing = environment.serverPid === undefined;
  const agentsBundle: Promise<string | undefined> = options.agents
    ? import('./agents/worker.js')
        .then(({ bundleAgentsWorkflows }) => bundleAgentsWorkflows(environment.directory))
        .catch((error: unknown) => {
          notMeasured.agents = (error as Error).message;
          say(`per-step: @temporalio/openai-agents unavailable: ${notMeasured.agents}`);
          return undefined;
        })
    : Promise.resolve(undefined);
  const groups: Array<() => Promise<Variant[]>> = [
    async () => [await plainVariant(modelUrl, environment.directory)],
    () =>
      inSequence([
        () => distVariant('keel', '(b) Keel, built worker (node dist/worker.js)', environment, modelUrl),
        ...(options.localTool
          ? [
              () =>
                distVariant('keelLocal', '(b″) as (b), the tool marked local', environment, modelUrl, true),
            ]
          : []),
      ]),
    async () => {
      const bundle = await agentsBundle;
      if (bundle === undefined) return [];
      const label = '(c) @temporalio/openai-agents, own process';
      try {
        return [await agentsVariant('agents', label, environment, modelUrl, bundle)];
      } catch (error) {
        notMeasured.agents = (error as Error).message;
        say(`per-step: @temporalio/openai-agents unavailable: ${notMeasured.agents}`);
        return [];
      }
    },
  ];
  if (options.stockServer && existing) notMeasured.keelStock = 'the benchmark runs on an existing server';
  else if (options.stockServer)
    groups.push(() =>
      onServer(environment, {}, say, async (stock) => {
        const bundle = options.agentsOnStockServer ? await agentsBundle : undefined;
        return inSequence([
          () => distVariant('keelStock', '(b₀) as (b), stock dev server', stock, modelUrl),
          ...(bundle === undefined
            ? []
            : [() => agentsVariant('agentsStock', '(c₀) as (c), stock dev server', stock, modelUrl, bundle)]),
        ]);
      }),
    );
  if (options.eagerServer && existing) notMeasured.keelEager = 'the benchmark runs on an existing server';
  else if (options.eagerServer) {
    const eager = { ...KEEL_SERVER_DYNAMIC_CONFIG, 'system.enableActivityEagerExecution': true };
    const label = '(b′) as (b), server with eager activity dispatch';
    groups.push(() =>
      onServer(environment, eager, say, async (server) => [
        await distVariant('keelEager', label, server, modelUrl),
      ]),
    );
  }
  if (options.inProcess)
    groups.push(async () => {
      const bundle = await bundleWhatIf(environment.directory);
      return inSequence([
        () => keelInProcessVariant(environment, modelUrl),
        () =>
          whatIfVariant(
            'minimal',
            "(d) Keel's activities, minimal workflow (in process)",
            environment,
            modelUrl,
            bundle,
            false,
          ),
        () =>
          whatIfVariant(
            'localTool',
            '(e) as (d), tool as a local activity',
            environment,
            modelUrl,
            bundle,
            true,
          ),
      ]);
    });
  const settled = await Promise.allSettled(groups.map((group) => group()));
  const started = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) {
    for (const variant of started.reverse()) await variant.stop();
    throw failed.reason;
  }
  return started;
}
