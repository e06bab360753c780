// Warm latency in-process: each handler bundle invoked directly, as the Lambda runtime does
// once a container is warm, paired call by call with the same DynamoDB requests sent raw.
// The difference is the handler's own overhead; DynamoDB's time cancels out.
// Runs in its own process (see bench/run.ts); settings come in BENCH_WARM, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext } from '../support/api-events.ts';
import { loadEvents } from '../support/bench-tables.ts';
import { median, round, summarise, type LatencySummary } from '../support/stats.ts';
import { warmOperations, type RawOperations } from './operations.ts';

interface WarmSettings {
  endpoint: string;
  tables: { events: string; idempotency: string };
  bundles: Record<string, string>;
  rawOperations: string;
  window: { startDate: string; endDate: string };
  iterations: number;
  warmUp: number;
  cpuSamples: number;
}

export interface InProcessResult {
  name: string;
  handler: LatencySummary;
  raw: LatencySummary;
  /** Median of the per-pair differences handler - raw, in ms. */
  overheadP50Ms: number;
  handlerCpuMsPerCall: number;
  rawCpuMsPerCall: number;
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const settings = JSON.parse(process.env.BENCH_WARM ?? '{}') as WarmSettings;
const raw = (await import(pathToFileURL(settings.rawOperations).href)) as RawOperations;
const calls = settings.warmUp + settings.iterations + settings.cpuSamples;
const { events, operations } = warmOperations(raw, settings.tables, settings.window, calls);
await loadEvents(settings.endpoint, settings.tables.events, events, 8);

const handlers = new Map<string, Handler>();
for (const operation of operations) {
  if (!handlers.has(operation.handler)) {
    const bundle = settings.bundles[operation.handler] as string;
    handlers.set(operation.handler, ((await import(pathToFileURL(bundle).href)) as { handler: Handler }).handler);
  }
}

const results: InProcessResult[] = [];
for (const operation of operations) {
  const handler = handlers.get(operation.handler) as Handler;
  const callHandler = async () => {
    const event = operation.event();
    const context = lambdaContext(operation.handler);
    const started = performance.now();
    const response = await handler(event, context);
    const elapsed = performance.now() - started;
    if (response.statusCode !== operation.expectedStatus) {
      throw new Error(`${operation.name} answered ${response.statusCode}: ${response.body}`);
    }
    return elapsed;
  };
  const callRaw = async () => {
    const started = performance.now();
    await operation.raw();
    return performance.now() - started;
  };

  process.stderr.write(`  in-process: ${operation.name}\n`);
  for (let i = 0; i < settings.warmUp; i++) {
    await callHandler();
    await callRaw();
  }
  const handlerSamples: number[] = [];
  const rawSamples: number[] = [];
  const differences: number[] = [];
  for (let i = 0; i < settings.iterations; i++) {
    // Alternate which goes first, so neither always meets a freshly idle connection or GC.
    let handlerMs: number;
    let rawMs: number;
    if (i % 2 === 0) {
      handlerMs = await callHandler();
      rawMs = await callRaw();
    } else {
      rawMs = await callRaw();
      handlerMs = await callHandler();
    }
    handlerSamples.push(handlerMs);
    rawSamples.push(rawMs);
    differences.push(handlerMs - rawMs);
  }
  // CPU per call (this process only: DynamoDB Local's work is not counted), for sizing memory.
  const cpuPerCall = async (call: () => Promise<number>, count: number) => {
    const before = process.cpuUsage();
    for (let i = 0; i < count; i++) await call();
    const used = process.cpuUsage(before);
    return round((used.user + used.system) / 1000 / count);
  };
  const half = Math.floor(settings.cpuSamples / 2);
  results.push({
    name: operation.name,
    handler: summarise(handlerSamples),
    raw: summarise(rawSamples),
    overheadP50Ms: round(median(differences)),
    handlerCpuMsPerCall: await cpuPerCall(callHandler, half),
    rawCpuMsPerCall: await cpuPerCall(callRaw, settings.cpuSamples - half),
  });
}

writeSync(3, JSON.stringify(results));
process.exit(0);
