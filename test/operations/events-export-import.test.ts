// The restore drill, end to end on the local run: fill a stage through the API, export it with
// the backup commands README.md and docs/DEPLOY.md document, run literally through `npm run`,
// wipe it, import the file the same way, and every list page and every GET (body and ETag)
// answers exactly as before. A second import changes nothing; a file with one bad line is
// refused with nothing written. The drill runs on tables of its own (a second local API on the
// shared DynamoDB Local), so it never touches what other test files read.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiRetrying } from '../support/api-client.ts';
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
    {
      DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint,
      ...tables,
      MUSEUM_ADMIN_PASSWORD: PASSWORD,
      MUSEUM_DATA_DIR: join(workDirectory, 'data'),
    },
    join(workDirectory, 'local-api.log'),
  );
}, LOCAL_API_START_TIMEOUT_MS + 60_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await api?.stop();
  await rm(workDirectory, { recursive: true, force: true });
});

/** A request as the documented client sends it (apiRetrying: a write carries a key and is resent after a 503 or 504). */
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; etag: string | null; text: string }> {
  const response = await apiRetrying(method, path, {
    baseUrl: api.url,
    as: { username: 'admin', password: PASSWORD },
    ...(body === undefined ? {} : { json: body }),
  });
  return { status: response.status, etag: response.headers.get('etag'), text: response.text };
}

function cli(
  args: string[],
  stdin = '',
  tableNames: Record<string, string> = tables,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/events.ts', ...args], {
    env: { ...process.env, DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, ...tableNames },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Every `npm run events -- ...` line of the docs' shell blocks, as written. */
async function documentedEventsCommands(): Promise<string[]> {
  const commands: string[] = [];
  for (const document of ['README.md', 'docs/DEPLOY.md']) {
    for (const match of (await readFile(document, 'utf8')).matchAll(/^npm run(?: -s)? events -- .*$/gm)) commands.push(match[0]);
  }
  return commands;
}

/**
 * Runs a documented command literally with `sh -c`, in a directory of its own inside the project
 * (npm finds package.json above it, and a relative file name means that directory), against the
 * drill's tables.
 */
async function runLiterally(command: string, directory: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) =>
    execFile(
      'sh',
      ['-c', command],
      { cwd: directory, env: { ...process.env, DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, ...tables } },
      (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
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
    const dates = Array.from(
      { length: 1 + (i % 4) },
      (_, d) => `${YEAR}-${String(1 + ((i + d * 3) % 12)).padStart(2, '0')}-${String(1 + ((i * 7 + d) % 28)).padStart(2, '0')}`,
    );
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

  // The documented local backup commands (the --table ones name a deployed table), as typed.
  const documented = (await documentedEventsCommands()).filter((command) => !command.includes('--table'));
  const exportCommand = documented.find((command) => command.startsWith('npm run events -- export'));
  const importCommand = documented.find((command) => command.startsWith('npm run events -- import'));
  expect(exportCommand).toBeDefined();
  expect(importCommand).toBeDefined();
  // Inside the project (npm finds its package.json), in a folder git ignores.
  await mkdir(resolve('dist'), { recursive: true });
  const directory = await mkdtemp(join(resolve('dist'), 'backup-drill-'));
  try {
    const exported = await runLiterally(exportCommand as string, directory);
    expect(exported).toMatchObject({ code: 0 });
    const file = await readFile(join(directory, 'events.jsonl'), 'utf8');
    const lines = file.trim().split('\n');
    expect(lines).toHaveLength(23);
    expect(exported.stderr).toMatch(/Exported 23 events from .* to events\.jsonl\. It is not a point-in-time snapshot/);

    for (const id of ids.slice(0, 23)) expect((await call('DELETE', `/special-events/${id}`)).status).toBe(204);
    expect((await cli(['export'])).stdout).toBe('');

    const imported = await runLiterally(importCommand as string, directory);
    expect(imported.stderr).toContain('Imported 23 events into museum-drill-events');
    expect(imported.stderr).toContain('23 created, 0 unchanged, 0 replaced');
    expect(imported.code).toBe(0);
    expect(await snapshot(ids)).toEqual(before);

    const again = await runLiterally(importCommand as string, directory);
    expect(again.stderr).toContain('0 created, 23 unchanged, 0 replaced');
    expect(await snapshot(ids)).toEqual(before);
    // Export is stable: the same lines again (the order is the table's); to stdout without npm's banner.
    const toStdout = await cli(['export']);
    expect(toStdout.stdout.trim().split('\n').sort()).toEqual([...lines].sort());
    // Not a terminal: no progress line, only the summary.
    expect(toStdout.stderr.trim().split('\n')).toHaveLength(1);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}, 240_000);

test('every documented events command reads and writes files, never a redirection that npm would corrupt', async () => {
  const commands = await documentedEventsCommands();
  expect(commands.length).toBeGreaterThanOrEqual(4);
  for (const command of commands) {
    if (command.startsWith('npm run -s ')) continue;
    expect({ command, redirects: /[<>|]/.test(command.replace(/<[A-Za-z]+>/g, '')) }).toEqual({ command, redirects: false });
  }
});

test('an export redirected through npm run (npm writes its own lines to stdout first) is refused, saying to use --output', async () => {
  await mkdir(resolve('dist'), { recursive: true });
  const directory = await mkdtemp(join(resolve('dist'), 'backup-refused-'));
  try {
    const refused = await runLiterally('npm run events -- export > events.jsonl', directory);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/npm has written its own lines to stdout.*use --output events\.jsonl/);
    // npm -s prints no banner: that redirection is sound.
    const silent = await runLiterally('npm run -s events -- export > events.jsonl', directory);
    expect(silent.code).toBe(0);
    expect((await readFile(join(directory, 'events.jsonl'), 'utf8')).startsWith('{')).toBe(true);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}, 120_000);

test('one event is counted in the singular, and the export and import name the files', async () => {
  const own = { TABLE_NAME: `museum-drill-one-${suffix}`, IDEMPOTENCY_TABLE_NAME: `museum-drill-one-idem-${suffix}` };
  const directory = await mkdtemp(join(tmpdir(), 'museum-one-'));
  try {
    const line = JSON.stringify({
      eventId: randomUUID(),
      name: 'Only',
      location: 'Hall',
      eventDescription: 'One',
      dates: [`${YEAR + 2}-01-01`],
      price: 1,
      version: 7,
    });
    await writeFile(join(directory, 'in.jsonl'), `${line}\n`);
    const imported = await cli(['import', '--input', join(directory, 'in.jsonl')], '', own);
    expect(imported.stderr).toMatch(/^Imported 1 event into museum-drill-one-\S+: 1 created, 0 unchanged, 0 replaced\.$/m);
    const exported = await cli(['export', '--output', join(directory, 'out.jsonl')], '', own);
    expect(exported.stderr).toMatch(/^Exported 1 event from museum-drill-one-\S+ to out\.jsonl\./m);
    expect(await readFile(join(directory, 'out.jsonl'), 'utf8')).toBe(`${line}\n`);
    // Written beside the target and renamed: no partial file is left.
    expect(existsSync(join(directory, `out.jsonl.partial-${process.pid}`))).toBe(false);
    const missing = await cli(['import', '--input', join(directory, 'absent.jsonl')], '', own);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Cannot read .*absent\.jsonl: ENOENT/);
    const unwritable = await cli(['export', '--output', join(directory, 'no-such-folder', 'out.jsonl')], '', own);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/^Cannot write .*out\.jsonl: ENOENT/);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}, 120_000);

test('a file with one bad line is refused before anything is written', async () => {
  const good = (id: string) =>
    JSON.stringify({
      eventId: id,
      name: 'Good',
      location: 'Hall',
      eventDescription: 'Fine',
      dates: [`${YEAR + 1}-01-01`],
      price: 1,
      version: 1,
    });
  const first = randomUUID();
  const second = randomUUID();
  const withVersion = (version: unknown) => good(randomUUID()).replace('"version":1', `"version":${String(version)}`);
  const file = [
    good(first),
    JSON.stringify({ eventId: second, name: 'Bad', location: 'Hall', eventDescription: 'x', dates: ['2041-02-30'], price: -1, version: 1 }),
    '{not json',
    good(first),
    // Versions past exact integers would break the ETag's concurrency control: refused.
    withVersion('9007199254740991'),
    withVersion('1e20'),
    withVersion('2.5'),
    JSON.stringify({ eventId: randomUUID(), name: 'Odd', colour: 'red' }),
  ].join('\n');
  const refused = await cli(['import'], `${file}\n`);
  expect(refused.code).toBe(1);
  const lines = refused.stderr.trim().split('\n');
  expect(lines[0]).toBe('The file was refused and nothing was written:');
  expect(lines).toContain(
    'Line 2: dates[0] must be a real calendar date written YYYY-MM-DD (years 1900 to 9999); price must not be negative.',
  );
  expect(lines).toContainEqual(expect.stringMatching(/^Line 3 is not valid JSON: /));
  expect(lines).toContain(`Line 4 repeats event ${first}, already on line 1.`);
  for (const line of [5, 6, 7])
    expect(lines).toContain(
      `Line ${line}: version must be a whole number from 1 to 9007199254740990 (so that the next change's version is still exact).`,
    );
  expect(lines).toContain(
    'Line 8: location is missing; eventDescription is missing; dates is missing; price is missing; version is missing; ' +
      'colour is not a field of an event (the fields are eventId, name, location, eventDescription, dates, price, version).',
  );
  // No validator's own wording reaches the reader (line 3 quotes JSON.parse, as HTTP does).
  expect(refused.stderr.replace(/^Line 3 .*$/m, '')).not.toMatch(/Invalid key|Expected|received/);
  expect((await call('GET', `/special-events/${first}`)).status).toBe(404);
});

test('every line is checked by the rules of HTTP before anything is written: month limit, numbers no double holds, duplicate keys', async () => {
  const event = (fields: Record<string, unknown> = {}) => ({
    eventId: randomUUID(),
    name: 'Checked',
    location: 'Hall',
    eventDescription: 'Line by line',
    dates: [`${YEAR + 3}-01-01`],
    price: 1,
    version: 1,
    ...fields,
  });
  // 60 distinct months, over LIMITS.maxEventMonths: the store would refuse it when writing.
  const sixtyMonths = Array.from({ length: 60 }, (_, m) => `${YEAR + 3 + Math.floor(m / 12)}-${String(1 + (m % 12)).padStart(2, '0')}-01`);
  const good = Array.from({ length: 21 }, () => event());
  const lines = good.map((e) => JSON.stringify(e));
  lines[10] = JSON.stringify(event({ dates: sixtyMonths }));
  const file = [
    ...lines,
    JSON.stringify(event()).replace('"price":1', '"price":1e-400'),
    JSON.stringify(event()).replace('"price":1', '"price":10.000000000000000001'),
    JSON.stringify(event()).replace('"price":1', '"price":1,"price":2'),
  ].join('\n');
  const refused = await cli(['import'], `${file}\n`);
  expect(refused.code).toBe(1);
  const problems = refused.stderr.trim().split('\n');
  expect(problems[0]).toBe('The file was refused and nothing was written:');
  expect(problems.slice(1)).toEqual([
    expect.stringMatching(/^Line 11: dates must fall in at most 48 distinct months \(maxEventMonths\), not 60/),
    expect.stringMatching(/^Line 22: price /),
    expect.stringMatching(/^Line 23: price /),
    'Line 24 is invalid: "price" is given more than once.',
  ]);
  // Not one event of the file was written, before or after line 11.
  for (const { eventId } of good) expect((await call('GET', `/special-events/${eventId}`)).status).toBe(404);
});

test('wrong arguments are refused with the usage, before anything starts', async () => {
  const wrong = await cli(['backup']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('Usage: npm run events -- export --output <file> | import --input <file>');
  const crossed = await cli(['export', '--input', 'x.jsonl']);
  expect(crossed.code).toBe(2);
  expect(crossed.stderr).toMatch(/^--input applies to import/);
});
