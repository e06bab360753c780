// The throughput measurement alone (`node --import tsx bench/throughput/run.ts`), on the same data
// as in `npm run bench`, through the local API with the deployed method throttling.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { buildForBench, FUNCTIONS_DIRECTORY } from '../support/bench-build.ts';
import { withBenchDynamoDb } from '../support/bench-dynamodb.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import { startHttpServer } from '../warm/http.ts';
import { measureThroughput } from './measure.ts';
import { throughputSection, throughputVerdicts } from './report.ts';

const table = (header: string[], rows: (string | number)[][]) =>
  [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');

await mkdir(join('bench-results', 'logs'), { recursive: true });
await buildForBench();
await withBenchDynamoDb(async ({ endpoint, tables, window }) => {
  const server = await startHttpServer(
    { ...functionEnvironment(endpoint, tables, 'local-api'), BENCH_THROTTLE: 'deployed' },
    FUNCTIONS_DIRECTORY,
    join('bench-results', 'logs', 'throughput-api.log'),
  );
  try {
    const result = await measureThroughput(server.url, window);
    console.log(throughputSection(result, table));
    console.log(
      `\n${table(
        ['Target', 'Measured', 'Limit', 'Verdict'],
        throughputVerdicts(result).map((v) => [v.target, v.measured, v.limit, v.pass ? 'PASS' : 'FAIL']),
      )}`,
    );
  } finally {
    await server.stop();
  }
});
