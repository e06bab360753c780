// The run's store of synthesized configurations (test/infra/configurations.ts): a directory under
// the run's scratch directory (test/support/run-scratch.ts), so the global teardown removes it
// with everything else. For each configuration: its cloud assembly (`<nn>-<name>/`), its stored
// result (`<nn>-<name>.json`, written last and atomically) and the lock of the process that
// synthesizes it (`<nn>-<name>.lock`, holding its pid). The fast tier's global setup starts a
// batch over the configurations its chosen files read (test/support/fast-tier-setup.ts:
// `batch-list.json`, `batch.pid`, and `batch-done.json` once it ended); a test waits for the
// result it needs, asking the batch for it first (`wanted/`). Without a batch (the system tier)
// a test file's first request has Node synthesize, there and then, the configurations that file
// reads (test/infra/synthesize-configurations.ts --only), the one asked for first; a configuration
// another process has claimed is waited for, never synthesized twice. `.ci/run` points both tiers
// at one store of its own (MUSEUM_SYNTHESIS_STORE): nothing changes between its two tiers, so the
// system tier reads what the fast tier synthesized and synthesizes only the rest.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationKey, CONFIGURATIONS, configurationsReadBy, type StoredSynthesis } from './configurations.ts';

export const SYNTHESIZER = fileURLToPath(new URL('./synthesize-configurations.ts', import.meta.url));

/** How long a test waits for a configuration before it fails (a loaded machine can take minutes for the whole batch). */
const WAIT_MS = Number(process.env.MUSEUM_SYNTHESIS_WAIT_MS) || 20 * 60_000;

/** The store of this run: .ci/run's, or the one the fast tier's global setup sets; else under TMPDIR, which either tier's setup points at the run's scratch directory. */
export function storeDirectory(): string {
  return process.env.MUSEUM_SYNTHESIS_STORE ?? join(tmpdir(), 'museum-synthesis');
}

const NAMES = Object.keys(CONFIGURATIONS);
const slug = (name: string) =>
  `${String(NAMES.indexOf(name)).padStart(2, '0')}-${name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}`;

export type StorePaths = ReturnType<typeof storePaths>;

export function storePaths(store: string) {
  return {
    store,
    assembly: (name: string) => join(store, slug(name)),
    result: (name: string) => join(store, `${slug(name)}.json`),
    lock: (name: string) => join(store, `${slug(name)}.lock`),
    wanted: join(store, 'wanted'),
    batchList: join(store, 'batch-list.json'),
    batch: join(store, 'batch.pid'),
    done: join(store, 'batch-done.json'),
    log: (label: string) => join(store, `${label}.log`),
  };
}

const KEYS = new Map(Object.entries(CONFIGURATIONS).map(([name, configuration]) => [configurationKey(configuration), name]));
if (KEYS.size !== NAMES.length) throw new Error('test/infra/configurations.ts lists a configuration twice (two names, one context)');

export function configurationKeyOf(name: string): string {
  return configurationKey(CONFIGURATIONS[name]!);
}

/** The name under which configurations.ts lists this configuration, if it does. */
export function configurationName(key: string): string | undefined {
  return KEYS.get(key);
}

/** Takes the configuration for this process; false if another process has it. */
export function claim(paths: StorePaths, name: string): boolean {
  let fd: number;
  try {
    fd = openSync(paths.lock(name), 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  writeSync(fd, String(process.pid));
  closeSync(fd);
  return true;
}

export const isClaimed = (paths: StorePaths, name: string) => existsSync(paths.lock(name));

/** The configurations tests are waiting for, oldest request first, which a batch synthesizes before the rest. */
export function wantedNames(paths: StorePaths): string[] {
  const files = existsSync(paths.wanted) ? readdirSync(paths.wanted).filter((file) => !file.endsWith('.tmp')) : [];
  return files.sort().flatMap((file) => JSON.parse(readFileSync(join(paths.wanted, file), 'utf8')) as string[]);
}

/** This configuration, then the others the test file reads. */
const fileFirst = (name: string, testFile: string) => [name, ...configurationsReadBy([testFile]).filter((other) => other !== name)];

export function writeJsonAtomically(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};
const pidIn = (file: string) => Number(readFileSync(file, 'utf8') || Number.NaN);
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const tail = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').slice(-4000) : '(no log)');

/** The configurations a batch synthesizes: its list (all of them without one). */
export function batchNames(paths: StorePaths): string[] {
  return existsSync(paths.batchList) ? (JSON.parse(readFileSync(paths.batchList, 'utf8')) as string[]) : NAMES;
}

/**
 * A configuration from the store, for a test file (relative to test/): synthesized by the batch,
 * by another file's request, or here and now with the others that file reads. Blocks until it is there.
 */
export function storedSynthesis(name: string, testFile: string): StoredSynthesis {
  const paths = storePaths(storeDirectory());
  const deadline = Date.now() + WAIT_MS;
  for (let asked = false; ; sleep(100)) {
    if (existsSync(paths.result(name))) return JSON.parse(readFileSync(paths.result(name), 'utf8')) as StoredSynthesis;
    if (isClaimed(paths, name)) {
      // An empty lock was taken a moment ago; its pid follows.
      const pid = pidIn(paths.lock(name));
      if (!Number.isNaN(pid) && !isAlive(pid) && !existsSync(paths.result(name)))
        throw new Error(`The process that synthesized "${name}" (pid ${pid}) ended without storing it. The logs are in ${paths.store}.`);
    } else if (batchRunning(paths)) {
      // The batch's next ones: this, then the rest of what the file reads, which it asks for next.
      if (!asked) {
        mkdirSync(paths.wanted, { recursive: true });
        writeJsonAtomically(join(paths.wanted, `${Date.now()}-${process.pid}-${slug(name)}`), fileFirst(name, testFile));
        asked = true;
      }
    } else synthesizeHere(paths, fileFirst(name, testFile));
    if (Date.now() > deadline)
      throw new Error(
        `"${name}" was not synthesized within ${WAIT_MS / 1000} s (MUSEUM_SYNTHESIS_WAIT_MS). The logs are in ${paths.store}.`,
      );
  }
}

function batchRunning(paths: StorePaths): boolean {
  return existsSync(paths.batch) && !existsSync(paths.done) && isAlive(pidIn(paths.batch));
}

/** No batch: Node synthesizes these configurations, in this order, but those another process has claimed. */
function synthesizeHere(paths: StorePaths, names: string[]): void {
  mkdirSync(paths.store, { recursive: true });
  const log = paths.log(`only-${slug(names[0]!)}`);
  const output = openSync(log, 'a');
  const run = spawnSync(process.execPath, [SYNTHESIZER, paths.store, '--only', ...names], {
    env: synthesizerEnvironment(),
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  if (run.status !== 0)
    throw new Error(`Synthesizing ${names.join(', ')} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}):\n${tail(log)}`);
}

/** The synthesizing processes write their V8 coverage where the fast tier's setup says (else wherever NODE_V8_COVERAGE already points). */
function synthesizerEnvironment(): NodeJS.ProcessEnv {
  const coverage = process.env.MUSEUM_SYNTHESIS_V8_COVERAGE;
  return { ...process.env, ...(coverage ? { NODE_V8_COVERAGE: coverage } : {}) };
}

/** Starts a batch over these configurations, in the background (the fast tier's global setup). */
export function startBatch(store: string, names: string[]): ChildProcess {
  const paths = storePaths(store);
  mkdirSync(store, { recursive: true });
  writeJsonAtomically(paths.batchList, names);
  const output = openSync(paths.log('batch'), 'a');
  const child = spawn(process.execPath, [SYNTHESIZER, store], { env: synthesizerEnvironment(), stdio: ['ignore', output, output] });
  closeSync(output);
  if (child.pid === undefined) throw new Error(`could not start ${SYNTHESIZER}`);
  writeFileSync(paths.batch, String(child.pid));
  return child;
}

/**
 * Drops the claims a stopped batch left without a result (its process was stopped mid-synthesis),
 * so that a later run on the same store synthesizes those configurations instead of failing on a
 * claim whose process is gone.
 */
export function releaseUnfinished(store: string): void {
  const paths = storePaths(store);
  for (const name of NAMES) if (isClaimed(paths, name) && !existsSync(paths.result(name))) rmSync(paths.lock(name), { force: true });
}

/** Stops a batch the run no longer needs (the global teardown): it was still synthesizing configurations no test read. */
export async function stopBatch(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
