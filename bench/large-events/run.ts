// `npm run bench:large-events`: only the large-events part of `npm run bench` (write latency and
// write units of 366-date events, the change item's share beside them), for a change to the write
// path measured without the whole benchmark. Uses dist/functions as built by `npm run build`.
import { join, resolve } from 'node:path';
import { LIMITS } from '../../functions/events/limits.ts';
import { routes } from '../../functions/routes.ts';
import { withBenchDynamoDb } from '../support/bench-dynamodb.ts';
import { runChild } from '../support/child-process.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import type { LargeEventResult } from './measure.ts';

const bundles = Object.fromEntries(routes.map((route) => [route.handler, resolve('dist/functions', route.handler, 'index.mjs')]));
const results = await withBenchDynamoDb(({ endpoint, tables }) =>
  runChild<LargeEventResult[]>(['--import', 'tsx', 'bench/large-events/measure.ts'], {
    env: {
      ...functionEnvironment(endpoint, tables, 'large-events'),
      BENCH_LARGE: JSON.stringify({ endpoint, tables, bundles, iterations: 40, warmUp: 5, capacitySamples: 4 }),
    },
    logFile: join('bench-results', 'logs', 'large-events-alone.log'),
    forwardStderr: true,
  }),
);
console.log(`Large events (${LIMITS.maxDates} dates), warm, in-process:`);
for (const result of results) {
  console.log(
    `  ${result.name}: p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms, ` +
      `${result.writeCapacity} WCU (change item ${result.changeWriteCapacity}, without it ${result.writeCapacity - result.changeWriteCapacity})`,
  );
}
