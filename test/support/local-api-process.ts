// Starts `bin/local-api.ts` (what `npm start` runs) as a child process and waits for its URL.
// Nothing it starts outlives the test: a start that fails or times out is stopped before the
// promise settles, and whatever a test left running (its afterAll never ran, its hook timed out)
// is killed when the test process exits; its DynamoDB Local's watchdog then stops Java too.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialKeysFileIn } from '../../lib/local/credential-keys-file.ts';
import { freePort } from '../../lib/local/dynamodb-local.ts';
import { SETTINGS } from '../../lib/local/local-settings.ts';
import { testEnvironment } from './test-environment.ts';

/**
 * This process's environment for a local run it starts, without the MUSEUM_* variables of the test
 * harness (MUSEUM_INJECTED_API_URL, MUSEUM_CHILD_COVERAGE, MUSEUM_FUZZ_RUNS...): the run refuses a
 * MUSEUM_* variable that is none of its settings, as a misspelling.
 */
export function inheritedEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MUSEUM_') || name in SETTINGS));
}

export interface LocalApiProcess {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** How long a start may take; a hook that starts one needs a longer timeout than this. */
export const LOCAL_API_START_TIMEOUT_MS = 180_000;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Gives a data directory the tests' credential key (the global setup's key file), so that a local
 * API started on it with the shared DYNAMODB_ENDPOINT verifies the users the suites add; returns it.
 */
export async function withTestCredentialKeys(dataDirectory: string): Promise<string> {
  const keys = process.env.TEST_CREDENTIAL_KEYS_FILE;
  if (!keys) throw new Error('Run these tests with `npm run test:system` (the global setup makes the credential key)');
  await mkdir(dataDirectory, { recursive: true, mode: 0o700 });
  await copyFile(keys, credentialKeysFileIn(dataDirectory));
  return dataDirectory;
}

export async function startLocalApiProcess(env: Record<string, string>, logFile: string): Promise<LocalApiProcess> {
  const port = await freePort();
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local-api.ts'], {
    // The suites measure other things than throttling: no method limit unless a test asks for the
    // deployed one (MUSEUM_THROTTLE_RATE_LIMIT: '' in `env`; lib/local/gateway-throttling.ts).
    env: {
      ...inheritedEnvironment(),
      PORT: String(port),
      MUSEUM_THROTTLE_RATE_LIMIT: '100000',
      MUSEUM_THROTTLE_BURST_LIMIT: '100000',
      ...env,
    },
    // Straight into the log file, not through this process: a test process busy sending a flood
    // would drain a pipe late, and the API, whose writes to a full pipe block, would stall with it.
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  /** `signal`, then SIGKILL if it has not exited within 20 s (a stop must end even if the process hangs). */
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  let url: string;
  try {
    const output = () => readFileSync(logFile, 'utf8');
    for (const deadline = Date.now() + LOCAL_API_START_TIMEOUT_MS; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const match = /listening on (\S+)/.exec(output());
      if (match?.[1]) {
        url = match[1];
        break;
      }
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`The local API exited with ${child.exitCode ?? child.signalCode}:\n${output()}`);
      if (Date.now() > deadline) throw new Error(`The local API did not start in ${LOCAL_API_START_TIMEOUT_MS / 1000} s:\n${output()}`);
    }
  } catch (error) {
    await stop('SIGKILL');
    throw error;
  }
  return { url, process: child, stop: () => stop('SIGTERM') };
}

/** Settings for a local API with the deployed production method throttling (the harness lifts it). */
export const DEPLOYED_THROTTLING = { MUSEUM_THROTTLE_RATE_LIMIT: '', MUSEUM_THROTTLE_BURST_LIMIT: '' } as const;

export interface OwnLocalApi extends LocalApiProcess {
  /** The scratch directory: the data directory `data/` and the log `api.log`; `stop()` removes it. */
  work: string;
  logFile: string;
}

/**
 * A local API process of a test's own, so that what it measures or floods is its alone: on the
 * shared DynamoDB Local (unless `env` names another endpoint), verifying the suites' users with the
 * tests' credential key, in a scratch directory `museum-<name>-*` that `stop()` removes.
 */
export async function startOwnLocalApi(name: string, env: Record<string, string> = {}): Promise<OwnLocalApi> {
  const work = await mkdtemp(join(tmpdir(), `museum-${name}-`));
  const logFile = join(work, 'api.log');
  try {
    const local = await startLocalApiProcess(
      {
        DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint,
        MUSEUM_DATA_DIR: await withTestCredentialKeys(join(work, 'data')),
        ...env,
      },
      logFile,
    );
    const stop = async () => {
      try {
        await local.stop();
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    };
    return { ...local, work, logFile, stop };
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}
