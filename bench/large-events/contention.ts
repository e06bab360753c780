// Contention: N = 1, 2, 4, 8, 16 concurrent PATCHes that each replace all 366 dates and the name
// of one event, with a DELETE mixed in, 5 bursts each, against the local API (the handler and
// authorizer bundles of `npm run build`, DynamoDB Local in memory). Per N: bursts with at least
// one success, the answers, the winners' p50/p99, how fast the losers were answered, and the
// write units of one committed whole-year PATCH (the store from source, capacity counted).
// `npm run bench:contention` (builds first); prints a Markdown table, writes bench-results/contention.json.
// With MUSEUM_TEST_CANCEL_SHARE (e.g. 0.2) and/or MUSEUM_TEST_INDEX_LAG_MS, the API reaches
// DynamoDB Local through the fault proxy, which cancels that share of writes as DynamoDB does
// (TransactionConflict, throttling) and lags the indexes: the table then shows DynamoDB's behaviour.
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { addDays } from '../../functions/events/calendar-dates.ts';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { startBenchCredentialKeys } from '../support/bench-credential-keys.ts';
import { behaviourFromEnvironment, startFaultProxy } from '../support/fault-proxy.ts';
import { basicAuthorization, BENCH_PRINCIPAL } from '../support/api-events.ts';
import { addBenchUser, BENCH_PASSWORD, createBenchTables, sampleEvent, loadEvents } from '../support/bench-tables.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import { quantile, round } from '../support/stats.ts';
import { countingEventsStore } from '../support/write-capacity.ts';
import { startHttpServer } from '../warm/http.ts';

const CONCURRENCY = [1, 2, 4, 8, 16];
const BURSTS = 5;
const yearOf = (first: string) => Array.from({ length: 366 }, (_, i) => addDays(first, i));
const years = [yearOf('2032-01-01'), yearOf('2036-01-01')];

interface Answer {
  method: string;
  status: number;
  ms: number;
  retryAfter: string | null;
}

const loadBefore = loadavg();
const dynamodb = await startDynamoDbLocal();
const stopKeys = await startBenchCredentialKeys(dynamodb.endpoint);
const tables = { events: 'contention-events', idempotency: 'contention-idempotency' };
interface ContentionRow {
  n: number;
  bursts: number;
  burstsWithSuccess: number;
  patch200: number;
  delete204: number;
  conflicts409: number;
  notFound404: number;
  unavailable503: number;
  other: number;
  conflictsWithRetryAfter: number;
  winnerP50Ms: number | null;
  winnerP99Ms: number | null;
  loserP50Ms: number | null;
  loserMaxMs: number | null;
}
const results: ContentionRow[] = [];
let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;
try {
  await createBenchTables(dynamodb.endpoint, tables.events, tables.idempotency);
  await addBenchUser(dynamodb.endpoint, tables.events);
  await mkdir('bench-results', { recursive: true });
  const behaviour = behaviourFromEnvironment();
  const proxy = behaviour && (await startFaultProxy(dynamodb.endpoint, behaviour));
  if (behaviour) process.stderr.write(`  DynamoDB behaviour: ${JSON.stringify(behaviour)}\n`);
  server = await startHttpServer(
    functionEnvironment(proxy?.endpoint ?? dynamodb.endpoint, tables, 'local-api'),
    'dist/functions',
    join('bench-results', 'contention-local-api.log'),
  );
  const authorization = basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD);
  const send = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const started = performance.now();
    const response = await fetch(`${server?.url}${path}`, {
      method,
      headers: { Authorization: authorization, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await response.arrayBuffer();
    return { method, status: response.status, ms: performance.now() - started, retryAfter: response.headers.get('retry-after') };
  };
  // Warm the authorizer's cache and each handler once.
  const warm = sampleEvent(years[0] as string[], 'Contention warm-up');
  await loadEvents(dynamodb.endpoint, tables.events, [warm], 1);
  await send('PATCH', `/special-events/${warm.eventId}`, { name: 'Warm', dates: years[1] });
  await send('DELETE', `/special-events/${warm.eventId}`);

  for (const n of CONCURRENCY) {
    const answers: Answer[] = [];
    let burstsWithSuccess = 0;
    for (let burst = 0; burst < BURSTS; burst++) {
      const event = sampleEvent(years[0] as string[], `Contention ${n}.${burst}`);
      await loadEvents(dynamodb.endpoint, tables.events, [event], 1);
      const patches = Array.from({ length: n }, (_, i) =>
        send('PATCH', `/special-events/${event.eventId}`, { name: `Contention ${n}.${burst}.${i}`, dates: years[(i + 1) % 2] }),
      );
      // The DELETE joins the burst a moment after the PATCHes.
      const deletion = new Promise((resolve) => setTimeout(resolve, 5)).then(() => send('DELETE', `/special-events/${event.eventId}`));
      const burstAnswers = await Promise.all([...patches, deletion]);
      answers.push(...burstAnswers);
      if (burstAnswers.some((answer) => answer.status === 200 || answer.status === 204)) burstsWithSuccess += 1;
    }
    const winners = answers.filter((a) => a.method === 'PATCH' && a.status === 200).map((a) => a.ms);
    const losers = answers.filter((a) => a.status === 409).map((a) => a.ms);
    const count = (status: number) => answers.filter((a) => a.status === status).length;
    results.push({
      n,
      bursts: BURSTS,
      burstsWithSuccess,
      patch200: answers.filter((a) => a.method === 'PATCH' && a.status === 200).length,
      delete204: count(204),
      conflicts409: count(409),
      notFound404: count(404),
      unavailable503: count(503),
      other: answers.filter((a) => ![200, 204, 404, 409, 503].includes(a.status)).length,
      conflictsWithRetryAfter: answers.filter((a) => a.status === 409 && Number(a.retryAfter) >= 1).length,
      winnerP50Ms: winners.length ? round(quantile(winners, 0.5), 1) : null,
      winnerP99Ms: winners.length ? round(quantile(winners, 0.99), 1) : null,
      loserP50Ms: losers.length ? round(quantile(losers, 0.5), 1) : null,
      loserMaxMs: losers.length ? round(Math.max(...losers), 1) : null,
    });
    process.stderr.write(`  N = ${n}: ${JSON.stringify(results.at(-1))}\n`);
  }

  // Write units of one committed whole-year PATCH (all dates and the name), and of a DELETE.
  // The functions' own environment (endpoint, credentials), as bench/large-events/measure.ts runs.
  const { PATH: _path, HOME: _home, ...functionVariables } = functionEnvironment(dynamodb.endpoint, tables, 'contention');
  Object.assign(process.env, functionVariables);
  const counting = countingEventsStore(tables.events, tables.idempotency);
  const subject = sampleEvent(years[0] as string[], 'Contention units');
  await loadEvents(dynamodb.endpoint, tables.events, [subject], 1);
  const before = counting.consumed();
  await counting.store.updateEvent(subject.eventId, { name: 'Contention units, renamed', dates: years[1] });
  const patchUnits = counting.consumed() - before;
  await counting.store.deleteEvent(subject.eventId);
  const deleteUnits = counting.consumed() - before - patchUnits;
  counting.destroy();
  const loadAfter = loadavg();
  const report = {
    behaviour: behaviourFromEnvironment() ?? {},
    cpus: cpus().length,
    loadBefore: loadBefore.map((x) => round(x, 2)),
    loadAfter: loadAfter.map((x) => round(x, 2)),
    patchUnits,
    deleteUnits,
    results,
  };
  await writeFile(join('bench-results', 'contention.json'), JSON.stringify(report, null, 2));
  console.log(`DynamoDB behaviour: ${JSON.stringify(report.behaviour)}`);
  console.log(`load average before ${report.loadBefore.join(' / ')}, after ${report.loadAfter.join(' / ')} (${report.cpus} cores)`);
  console.log(`write units: one committed whole-year PATCH (all dates and the name) ${patchUnits}, its DELETE ${deleteUnits}\n`);
  console.log(
    '| N | bursts with a success | PATCH 200 / DELETE 204 / 409 / 404 / 503 | 409 with Retry-After | winners p50 / p99 | losers answered p50 / max |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.n} | ${r.burstsWithSuccess}/${r.bursts} | ${r.patch200} / ${r.delete204} / ${r.conflicts409} / ${r.notFound404} / ${r.unavailable503}${r.other ? ` (+${r.other} other)` : ''} | ` +
        `${r.conflictsWithRetryAfter}/${r.conflicts409} | ${r.winnerP50Ms ?? '–'} / ${r.winnerP99Ms ?? '–'} ms | ${r.loserP50Ms ?? '–'} / ${r.loserMaxMs ?? '–'} ms |`,
    );
  }
} finally {
  await server?.stop();
  await stopKeys();
  await dynamodb.stop();
}
process.exit(0);
