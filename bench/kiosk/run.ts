// The kiosk measurement alone (`node --import tsx bench/kiosk/run.ts`), on the same data as in
// `npm run bench`: 330 events, 30 in this week's window, through the local HTTP server.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { buildForBench, FUNCTIONS_DIRECTORY } from '../support/bench-build.ts';
import { withBenchDynamoDb } from '../support/bench-dynamodb.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import { startHttpServer } from '../warm/http.ts';
import { measureKiosk } from './measure.ts';
import { kioskSection, kioskVerdicts } from './report.ts';

const table = (header: string[], rows: (string | number)[][]) =>
  [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');

await mkdir(join('bench-results', 'logs'), { recursive: true });
await buildForBench();
await withBenchDynamoDb(async ({ endpoint, tables, window }) => {
  const server = await startHttpServer(
    functionEnvironment(endpoint, tables, 'local-api'),
    FUNCTIONS_DIRECTORY,
    join('bench-results', 'logs', 'kiosk-api.log'),
  );
  try {
    const kiosk = await measureKiosk(server.url, endpoint, tables.events, window);
    console.log(kioskSection(kiosk, table));
    console.log(
      `\n${table(
        ['Target', 'Measured', 'Limit', 'Verdict'],
        kioskVerdicts(kiosk).map((v) => [v.target, v.measured, v.limit, v.pass ? 'PASS' : 'FAIL']),
      )}`,
    );
  } finally {
    await server.stop();
  }
});
