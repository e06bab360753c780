// Real `npm start` runs for the lifecycle tests: spawned as a user would (the server script, or
// npm itself), observed from outside (ps, lsof, the lock file), and always cleaned up: every
// process a test starts is in its own process group, which afterEach kills whatever happened.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LockRecord } from '../../lib/local/data-directory-lock.ts';
import { freePort } from '../../lib/local/dynamodb-local.ts';
import { isAlive } from '../../lib/local/process-liveness.ts';
import { inheritedEnvironment } from './local-api-process.ts';

export interface LocalRun {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr interleaved. */
  output(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  port: number;
}

const started: ChildProcess[] = [];

/**
 * Starts the server script directly (`npm` false) or `npm start -- --no-build` (the bundles are
 * built by npm run test:system); `build`: the server script with --build (as `npm start` runs it).
 */
export async function startLocalRun(
  env: Record<string, string>,
  options: { npm?: boolean; port?: number; build?: boolean } = {},
): Promise<LocalRun> {
  const port = options.port ?? (await freePort());
  const [command, args] = options.npm
    ? ['npm', ['start', '--silent', '--', '--no-build']]
    : [process.execPath, ['--import', 'tsx', 'bin/local-api.ts', ...(options.build ? ['--build'] : [])]];
  const child = spawn(command, args, {
    env: { ...inheritedEnvironment(), PORT: String(port), MUSEUM_LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  // 'close', not 'exit': at 'exit' the last of the child's output may still be unread.
  const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, stderr: () => stderr, exited, port };
}

/**
 * Waits until the run prints its URL, or fails with what it printed if it exits or takes longer
 * than `timeoutMs` (generous: a first start on a loaded machine has taken 35 s).
 */
export async function untilListening(run: LocalRun, timeoutMs = 180_000): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    const url = /listening on (\S+)/.exec(run.output())?.[1];
    if (url) return url;
    if (run.child.exitCode !== null || run.child.signalCode !== null) throw new Error(`The local API exited:\n${run.output()}`);
    await sleep(100);
  }
  throw new Error(`The local API did not start in ${timeoutMs / 1000} s:\n${run.output()}`);
}

/**
 * Stops every process group started by startLocalRun: SIGTERM to the group (as a terminal or a
 * process manager would), then SIGKILL to what is left after 30 s (the watchdogs then stop Java).
 */
export async function killAllRuns(): Promise<void> {
  const children = started.splice(0);
  const signalGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of running) signalGroup(child, 'SIGTERM');
  await Promise.all(
    running.map((child) => Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(30_000, undefined, { ref: false })])),
  );
  for (const child of children) signalGroup(child, 'SIGKILL');
}

export function lockRecord(dataDirectory: string): LockRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDirectory, 'local-api.lock'), 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

/** The pids of DynamoDB Local processes whose command line names `directory`. */
export function javaProcessesUsing(directory: string): number[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n');
  return lines
    .filter((line) => /^\s*\d+ \S*java /.test(line) && line.includes('DynamoDBLocal') && line.includes(directory))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

export function isRunning(pid: number | undefined): boolean {
  // A zombie is not running: where PID 1 does not reap orphans (some sandboxes and containers), a
  // killed Java re-parented to it stays a zombie that still answers `kill -0`.
  return Boolean(pid) && isAlive(pid as number);
}

/** The TCP ports the processes listen on, as the system reports them. */
export function listeningPorts(pids: number[]): number[] {
  let text = '';
  try {
    text = execFileSync('lsof', ['-nP', '-a', '-iTCP', '-sTCP:LISTEN', '-p', pids.join(',')], { encoding: 'utf8' });
  } catch (error) {
    text = (error as { stdout?: string }).stdout ?? '';
  }
  return [...new Set([...text.matchAll(/:(\d+) \(LISTEN\)/g)].map((match) => Number(match[1])))];
}

/** Polls until `condition` holds, for at most `timeoutMs`; returns whether it did. */
export async function eventually(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (condition()) return true;
    await sleep(100);
  }
  return condition();
}
