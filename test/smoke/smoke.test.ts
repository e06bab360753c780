// `npm run smoke` is what CI runs against a deployed preview and production: here it runs the
// same way (a child process given only a base URL and credentials) against the local API, so
// the checks stay in step with the API and the contract.
import { spawn } from 'node:child_process';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';

function smoke(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/smoke/smoke.ts', ...args], {
    env: { ...process.env, MUSEUM_API_URL: '', MUSEUM_API_USERNAME: '', MUSEUM_API_PASSWORD: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

test('the full smoke run passes against the local API with an editor', async () => {
  const { editor } = TEST_USERS;
  const run = await smoke([], {
    MUSEUM_API_URL: testEnvironment().url,
    MUSEUM_API_USERNAME: editor.username,
    MUSEUM_API_PASSWORD: editor.password,
  });
  expect(run.stderr).toBe('');
  expect(run.stdout).toMatch(/^10 checks passed against http:\/\/127\.0\.0\.1:\d+\/v1\.1$/m);
  expect(run.code).toBe(0);
});

test('read-only, as production runs it: with a viewer, and without any user', async () => {
  const { viewer } = TEST_USERS;
  const withViewer = await smoke(['--read-only'], {
    MUSEUM_API_URL: testEnvironment().url,
    MUSEUM_API_USERNAME: viewer.username,
    MUSEUM_API_PASSWORD: viewer.password,
  });
  expect(withViewer.stdout).toContain('5 checks passed');
  expect(withViewer.code).toBe(0);
  const anonymous = await smoke(['--read-only'], { MUSEUM_API_URL: testEnvironment().url });
  expect(anonymous.stdout).toContain('3 checks passed');
  expect(anonymous.code).toBe(0);
});

test('a wrong password fails the run instead of passing quietly', async () => {
  const run = await smoke(['--read-only'], {
    MUSEUM_API_URL: testEnvironment().url,
    MUSEUM_API_USERNAME: 'visitor',
    MUSEUM_API_PASSWORD: 'not-the-password-1',
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('expected 200, got 401');
});

test('without a base URL it refuses to run', async () => {
  expect((await smoke([], {})).code).toBe(2);
});
