// The kiosk measurement alone (`node --import tsx bench/kiosk/run.ts`), on the same data as in
// `npm run bench`: 330 events, 30 in this week's window, through the local HTTP server.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { todayIn } from '../../functions/events/calendar-dates.ts';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { buildCalendar, defaultWindow } from '../list-scaling/dataset.ts';
import { buildForBench, FUNCTIONS_DIRECTORY } from '../support/bench-build.ts';
import { addBenchUser, createBenchTables, loadEvents } from '../support/bench-tables.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import { startHttpServer } from '../warm/http.ts';
import { measureKiosk } from './measure.ts';
import { kioskSection, kioskVerdicts } from './report.ts';

const table = (header: string[], rows: (string | number)[][]) =>
  [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');

await mkdir(join('bench-results', 'logs'), { recursive: true });
await buildForBench();
const dynamodb = await startDynamoDbLocal();
try {
  const tables = { events: 'bench-events', idempotency: 'bench-idempotency' };
  await createBenchTables(dynamodb.endpoint, tables.events, tables.idempotency);
  await addBenchUser(dynamodb.endpoint, tables.events);
  const window = defaultWindow(todayIn('UTC'));
  const calendar = buildCalendar(330, 30, window, 7);
  await loadEvents(dynamodb.endpoint, tables.events, [...calendar.inside, ...calendar.outside]);
  const server = await startHttpServer(functionEnvironment(dynamodb.endpoint, tables, 'local-api'), FUNCTIONS_DIRECTORY, join('bench-results', 'logs', 'kiosk-api.log'));
  try {
    const kiosk = await measureKiosk(server.url, dynamodb.endpoint, tables.events, window);
    console.log(kioskSection(kiosk, table));
    console.log(`\n${table(['Target', 'Measured', 'Limit', 'Verdict'], kioskVerdicts(kiosk).map((v) => [v.target, v.measured, v.limit, v.pass ? 'PASS' : 'FAIL']))}`);
  } finally {
    await server.stop();
  }
} finally {
  await dynamodb.stop();
}
