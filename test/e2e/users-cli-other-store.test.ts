// The users CLI pointed (DYNAMODB_ENDPOINT) at the store of a running in-memory local API from
// another data directory: that run verifies its users with its own credential keys, so the CLI
// must not hash with (or create) this directory's key, which has the same id `k1`, nor add a user
// who could never log in there. It refuses with one line that says how to reach the run; that way
// works. Also `-h`, as `npm start -- -h` takes it.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialKeysFileIn } from '../../lib/local/credential-keys-file.ts';
import { runningRuns } from '../../lib/local/run-registry.ts';
import { inheritedEnvironment, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';

let run: OwnLocalApi | undefined;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-users-other-store-'));
  run = await startOwnLocalApi('users-in-memory', { MUSEUM_IN_MEMORY: '1', DYNAMODB_ENDPOINT: '' });
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await run?.stop();
  await rm(work, { recursive: true, force: true });
});

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function usersCli(args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'bin/users.ts', ...args],
      { env: { ...inheritedEnvironment(), DYNAMODB_ENDPOINT: '', MUSEUM_IN_MEMORY: '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.destroy();
  });
}

test('-h prints the usage, as --help does', async () => {
  const [short, long] = await Promise.all([usersCli(['-h'], {}), usersCli(['--help'], {})]);
  expect(short).toEqual({ code: 0, stdout: expect.stringMatching(/^Usage: npm run -s users -- <command>/) as unknown, stderr: '' });
  expect(short).toEqual(long);
});

test('pointed at an in-memory run of another data directory, add is refused with one line, writing no key and no user; the way it names works', async () => {
  const record = runningRuns().find((candidate) => candidate.pid === run?.process.pid);
  if (!record) throw new Error('The in-memory run has no run record');
  expect(record.store).toBe('in memory');
  const otherDirectory = join(work, 'other-data');
  const username = `visitor-${randomUUID().slice(0, 8)}`;

  const refused = await usersCli(['add', username, '--role', 'viewer'], {
    DYNAMODB_ENDPOINT: record.dynamodbEndpoint,
    MUSEUM_DATA_DIR: otherDirectory,
  });
  expect({ code: refused.code, stdout: refused.stdout, lines: refused.stderr.trimEnd().split('\n') }).toEqual({
    code: 2,
    stdout: '',
    lines: [
      `DYNAMODB_ENDPOINT=${record.dynamodbEndpoint} is the store of the local API running on ${run?.url} (pid ${record.pid}), whose credential keys are not those of ${otherDirectory}: its users would never log in; run the CLI with MUSEUM_DATA_DIR=${record.dataDirectory} MUSEUM_IN_MEMORY=1 without DYNAMODB_ENDPOINT.`,
    ],
  });
  // No second key `k1` in the other directory, and no user in the run.
  expect(existsSync(credentialKeysFileIn(otherDirectory))).toBe(false);
  const listed = await usersCli(['list'], { MUSEUM_DATA_DIR: record.dataDirectory, MUSEUM_IN_MEMORY: '1' });
  expect(listed.code).toBe(0);
  expect(listed.stdout).not.toContain(username);

  // The way the line names: the run's own keys, so the user logs in.
  const added = await usersCli(['add', username, '--role', 'viewer'], { MUSEUM_DATA_DIR: record.dataDirectory, MUSEUM_IN_MEMORY: '1' });
  expect(added.code).toBe(0);
  const password = added.stdout.trim();
  const response = await fetch(`${run?.url}/special-events?startDate=9981-01-01&endDate=9981-01-01`, {
    headers: { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
  });
  expect(response.status).toBe(200);
}, 120_000);
