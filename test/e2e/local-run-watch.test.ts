// `npm start -- --watch`: an edit to a function's source reaches that function's next invocation
// (its bundle rebuilt, its environments retired) on the same port, with the data kept; an edit that
// does not build leaves the last good build answering. Run in a copy of the project's sources in a
// temporary directory (node_modules linked), so that editing them touches nothing of this checkout.
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jest } from '@jest/globals';
import { freePort } from '../../lib/local/dynamodb-local.ts';
import { basicAuthorization } from '../support/api-client.ts';
import { inheritedEnvironment } from '../support/local-api-process.ts';

jest.setTimeout(300_000);

const PASSWORD = 'watch-admin-password-1';
const COPIED = ['functions', 'lib', 'bin', 'scripts', 'openapi', 'package.json', 'package-lock.json', 'tsconfig.json'];

let checkout: string;
let child: ChildProcess;
let output = '';

beforeAll(async () => {
  checkout = await mkdtemp(join(tmpdir(), 'museum-watch-'));
  for (const entry of COPIED) await cp(resolve(entry), join(checkout, entry), { recursive: true });
  await symlink(resolve('node_modules'), join(checkout, 'node_modules'));
  child = spawn(process.execPath, ['--import', 'tsx', 'bin/local-api.ts', '--build', '--watch', '--in-memory'], {
    cwd: checkout,
    env: { ...inheritedEnvironment(), PORT: String(await freePort()), MUSEUM_ADMIN_PASSWORD: PASSWORD, MUSEUM_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
});

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    await exited;
    clearTimeout(timer);
  }
  await rm(checkout, { recursive: true, force: true });
});

/** Waits until the run has printed a line matching `pattern` (after `from` characters of output). */
async function printed(pattern: RegExp, from = 0, timeoutMs = 180_000): Promise<RegExpExecArray> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    const match = pattern.exec(output.slice(from));
    if (match) return match;
    if (child.exitCode !== null) throw new Error(`The local API exited:\n${output}`);
    await sleep(100);
  }
  throw new Error(`Not printed within ${timeoutMs / 1000} s: ${String(pattern)}\n${output}`);
}

test('an edit to a function reaches its next invocation, on the same port and data; an edit that does not build changes nothing', async () => {
  const url = (await printed(/listening on (\S+)/))[1] as string;
  const headers = { Authorization: basicAuthorization('admin', PASSWORD), 'Content-Type': 'application/json' };
  const created = await fetch(`${url}/special-events`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Watch', location: 'Hall', eventDescription: 'Edited live', dates: ['2031-03-03'], price: 1 }),
  });
  expect(created.status).toBe(201);
  const { eventId } = (await created.json()) as { eventId: string };
  const read = () => fetch(`${url}/special-events/${eventId}`, { headers });
  const before = await read();
  expect(before.status).toBe(200);
  expect(before.headers.get('x-edited')).toBeNull();
  const body = await before.text();

  const source = join(checkout, 'functions', 'get-special-event.ts');
  const original = await readFile(source, 'utf8');
  const edited = original.replace('{ ETag: etag(stored.version) }', "{ ETag: etag(stored.version), 'X-Edited': 'yes' }");
  expect(edited).not.toBe(original);
  let mark = output.length;
  await writeFile(source, edited);
  await printed(/watch: rebuilt get-special-event in [\d.]+ s/, mark);
  const after = await read();
  expect({ status: after.status, edited: after.headers.get('x-edited'), body: await after.text() }).toEqual({
    status: 200,
    edited: 'yes',
    body,
  });
  // Only the function made from the edited file was rebuilt.
  expect(output.slice(mark)).not.toMatch(/rebuilt (?!get-special-event)/);

  mark = output.length;
  await writeFile(source, `${edited}\nthis is not TypeScript (\n`);
  await printed(/watch: get-special-event not rebuilt \(.*\); it keeps running the last good build/, mark);
  const broken = await read();
  expect({ status: broken.status, edited: broken.headers.get('x-edited') }).toEqual({ status: 200, edited: 'yes' });
});
