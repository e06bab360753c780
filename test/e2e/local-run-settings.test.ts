// `npm start`'s command line and settings: a bad, incomplete or unknown setting and a bad option
// are refused in one line that names it, before anything is created (no data directory, no admin
// user, no DynamoDB Local); --help and --version answer and exit 0. One start per kind of check
// the run makes (a setting's value, an unknown name, a directory, the endpoint, an option): each
// rule's own line, for every setting, is test/unit/local-settings.test.ts's.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../lib/local/dynamodb-local.ts';
import { inheritedEnvironment } from '../support/local-api-process.ts';

const run = promisify(execFile);

let work: string;
let dataDirectory: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-local-settings-'));
  dataDirectory = join(work, 'data');
});
afterEach(() => rm(work, { recursive: true, force: true }));

/** Runs the server script (or npm start) to its exit; a start that got past the checks is killed by the timeout and fails the test. */
async function start(args: string[], env: Record<string, string> = {}, npm = false) {
  const [command, commandArgs] = npm
    ? ['npm', ['start', '--silent', '--', ...args]]
    : [process.execPath, ['--import', 'tsx', 'bin/local-api.ts', ...args]];
  const child = run(command, commandArgs, {
    env: {
      ...inheritedEnvironment(),
      PORT: String(await freePort()),
      MUSEUM_DATA_DIR: dataDirectory,
      MUSEUM_THROTTLE_RATE_LIMIT: '',
      MUSEUM_THROTTLE_BURST_LIMIT: '',
      DYNAMODB_ENDPOINT: '',
      ...env,
    },
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return child.then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: unknown) => {
      const failed = error as { code: number | string; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    },
  );
}

/** Refused with exactly `line` on stderr, nothing on stdout, exit `code`, and no data directory. */
async function expectRefused(answer: ReturnType<typeof start>, line: RegExp, code = 1) {
  const { code: exitCode, stdout, stderr } = await answer;
  const lines = stderr.trimEnd().split('\n');
  expect({ exitCode, stdout, lines }).toEqual({ exitCode: code, stdout: '', lines: [expect.stringMatching(line) as unknown] });
  expect(existsSync(dataDirectory)).toBe(false);
}

describe('settings refused before anything is created (exit code 1, one line naming the setting)', () => {
  test('MUSEUM_THROTTLE_RATE_LIMIT set alone (no admin user created, no password printed)', async () => {
    await expectRefused(
      start([], { MUSEUM_THROTTLE_RATE_LIMIT: '10' }),
      /^MUSEUM_THROTTLE_RATE_LIMIT is set without MUSEUM_THROTTLE_BURST_LIMIT: set both/,
    );
  });

  test('a misspelt MUSEUM_IN_MEMROY, with the setting it most likely meant', async () => {
    await expectRefused(
      start([], { MUSEUM_IN_MEMROY: '1' }),
      /^MUSEUM_IN_MEMROY is not a setting of the local API: did you mean MUSEUM_IN_MEMORY\?/,
    );
  });

  test('MUSEUM_DATA_DIR=/dev/null/x', async () => {
    dataDirectory = '/dev/null/x';
    await expectRefused(start([]), /^MUSEUM_DATA_DIR="\/dev\/null\/x" cannot be used: \/dev\/null is not a directory\.$/);
  });

  test('MUSEUM_BUNDLES_DIR=/dev/null/x, with and without --build', async () => {
    const line = /^MUSEUM_BUNDLES_DIR="\/dev\/null\/x" cannot be used: \/dev\/null is not a directory/;
    await expectRefused(start([], { MUSEUM_BUNDLES_DIR: '/dev/null/x' }), line);
    await expectRefused(start(['--build'], { MUSEUM_BUNDLES_DIR: '/dev/null/x' }), line);
  });

  test('an unreachable DYNAMODB_ENDPOINT', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    await expectRefused(
      start([], { DYNAMODB_ENDPOINT: endpoint }),
      new RegExp(`^DYNAMODB_ENDPOINT="${endpoint}" cannot be reached \\(ECONNREFUSED\\)`),
    );
  });

  test('an option is checked by the rule of the setting it stands for', async () => {
    await expectRefused(start(['--port', '70000']), /^PORT="70000" is not accepted/);
    await expectRefused(
      start(['--in-memory'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }),
      /^MUSEUM_IN_MEMORY=1 and DYNAMODB_ENDPOINT/,
    );
  });
});

describe('the command line', () => {
  test('npm start -- --help prints the usage and exits 0, creating nothing', async () => {
    const { code, stdout, stderr } = await start(['--help'], {}, true);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Usage: npm start \[-- options\]/);
    for (const option of ['--port <port>', '--in-memory', '--watch', '--no-build', '--version', '-h, --help'])
      expect(stdout).toContain(option);
    expect(existsSync(dataDirectory)).toBe(false);
  });

  test('--version prints the package version and exits 0', async () => {
    const { code, stdout } = await start(['--version']);
    expect({ code, stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^museum-special-events-api \d+\.\d+\.\d+\n$/) as unknown });
  });

  test('an unknown option or a stray argument is one line and exit code 2', async () => {
    await expectRefused(start(['--bogus']), /^Unknown option '--bogus' \(npm start -- --help lists the options\)$/, 2);
    await expectRefused(start(['extra']), /^Unexpected argument 'extra'.*\(npm start -- --help lists the options\)$/, 2);
  });
});
