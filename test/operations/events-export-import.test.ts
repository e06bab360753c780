// The restore drill, end to end on the local run: fill a stage through the API, export it with
// `npm run events -- export`, wipe it, import the file, and every list page and every GET (body
// and ETag) answers exactly as before. A second import changes nothing; a file with one bad line
// is refused with nothing written. The drill runs on tables of its own (a second local API on
// the shared DynamoDB Local), so it never touches what other test files read.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basicAuthorization } from '../support/api-client.ts';
import { LOCAL_API_START_TIMEOUT_MS, startLocalApiProcess, type LocalApiProcess } from '../support/local-api-process.ts';
import { testEnvironment } from '../support/test-environment.ts';

const PASSWORD = 'drill-admin-password-1';
const suffix = randomUUID().slice(0, 8);
const tables = { TABLE_NAME: `museum-drill-events-${suffix}`, IDEMPOTENCY_TABLE_NAME: `museum-drill-idempotency-${suffix}` };
const YEAR = 2041;

let api: LocalApiProcess;
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'museum-drill-'));
  api = await startLocalApiProcess(
    { DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, ...tables, MUSEUM_ADMIN_PASSWORD: PASSWORD, MUSEUM_DATA_DIR: join(workDirectory, 'data') },
    join(workDirectory, 'local-api.log'),
  );
}, LOCAL_API_START_TIMEOUT_MS + 60_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await api?.stop();
  await rm(workDirectory, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; etag: string | null; text: string }> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { Authorization: basicAuthorization('admin', PASSWORD), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
}

function cli(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/events.ts', ...args], {
    env: { ...process.env, DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, ...tables },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Every list page of the year and every GET of every event, as a client sees them. */
async function snapshot(ids: string[]): Promise<unknown> {
  const pages: string[] = [];
  for (let page = 1; ; page++) {
    const response = await call('GET', `/special-events?startDate=${YEAR}-01-01&endDate=${YEAR}-12-31&limit=7&page=${page}`);
    expect(response.status).toBe(200);
    pages.push(response.text);
    if ((JSON.parse(response.text) as unknown[]).length < 7) break;
  }
  const gets = await Promise.all(ids.map(async (id) => ({ id, ...(await call('GET', `/special-events/${id}`)) })));
  return { pages, gets };
}

test('fill, export, wipe, import: the list and every GET answer exactly as before; a re-import changes nothing', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 24; i++) {
    const dates = Array.from({ length: 1 + (i % 4) }, (_, d) => `${YEAR}-${String(1 + ((i + d * 3) % 12)).padStart(2, '0')}-${String(1 + ((i * 7 + d) % 28)).padStart(2, '0')}`);
    const created = await call('POST', '/special-events', {
      name: `Drill ${i % 5} – évènement ${i}`,
      location: i % 2 ? 'Main Hall' : 'Garden 🌿',
      eventDescription: `Line one\nline two of event ${i}`,
      dates,
      price: i * 2.25,
    });
    expect(created.status).toBe(201);
    ids.push((JSON.parse(created.text) as { eventId: string }).eventId);
  }
  // Some events have later versions (their ETag must survive), one is deleted (it must stay gone).
  for (const id of ids.slice(0, 5)) expect((await call('PATCH', `/special-events/${id}`, { price: 99.5 })).status).toBe(200);
  expect((await call('DELETE', `/special-events/${ids[23]}`)).status).toBe(204);
  const before = await snapshot(ids);

  const exported = await cli(['export']);
  expect(exported).toMatchObject({ code: 0 });
  const lines = exported.stdout.trim().split('\n');
  expect(lines).toHaveLength(23);
  expect(exported.stderr).toContain('Exported 23 events');
  // Not a terminal: no progress line, only the summary.
  expect(exported.stderr.trim().split('\n')).toHaveLength(1);

  for (const id of ids.slice(0, 23)) expect((await call('DELETE', `/special-events/${id}`)).status).toBe(204);
  expect((await cli(['export'])).stdout).toBe('');

  const imported = await cli(['import'], exported.stdout);
  expect(imported.stderr).toContain('23 created, 0 unchanged, 0 replaced');
  expect(imported.code).toBe(0);
  expect(await snapshot(ids)).toEqual(before);

  const again = await cli(['import'], exported.stdout);
  expect(again.stderr).toContain('0 created, 23 unchanged, 0 replaced');
  expect(await snapshot(ids)).toEqual(before);
  // Export is stable: the same lines again (the order is the table's).
  expect((await cli(['export'])).stdout.trim().split('\n').sort()).toEqual([...lines].sort());
}, 240_000);

test('a file with one bad line is refused before anything is written', async () => {
  const good = (id: string) => JSON.stringify({ eventId: id, name: 'Good', location: 'Hall', eventDescription: 'Fine', dates: [`${YEAR + 1}-01-01`], price: 1, version: 1 });
  const first = randomUUID();
  const second = randomUUID();
  const file = [good(first), JSON.stringify({ eventId: second, name: 'Bad', location: 'Hall', eventDescription: 'x', dates: ['2041-02-30'], price: -1, version: 1 }), '{not json', good(first)].join('\n');
  const refused = await cli(['import'], `${file}\n`);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('nothing was written');
  expect(refused.stderr).toMatch(/line 2: .*dates/);
  expect(refused.stderr).toMatch(/line 2: .*price/);
  expect(refused.stderr).toContain('line 3: not JSON');
  expect(refused.stderr).toContain(`line 4: event ${first} is already on line 1`);
  expect((await call('GET', `/special-events/${first}`)).status).toBe(404);
});

test('wrong arguments are refused with the usage, before anything starts', async () => {
  const wrong = await cli(['backup']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('Usage: npm run events -- export|import');
});
