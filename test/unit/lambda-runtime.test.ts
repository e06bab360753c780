// The local run's model of Lambda's execution environments (lib/local/lambda-runtime.ts), on small
// bundles that report their own module state: one invocation at a time per environment, a new
// environment (cold start) when all are busy, warm ones reused, idle ones retired, reserved and
// account concurrency throttled at once, a timeout that resets its environment, a context per
// invocation, an Init past its 10 s limit retried within the invocation, at most one Init per core
// at a time, and a response over Lambda's 6 MB payload limit refused.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
// https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
//
// No real clock: a bundle that must stay busy (an invocation, an Init) waits until the test
// releases it over a BroadcastChannel, and says when it starts waiting; Init limits, timeouts and
// idle retirement run on jest's fake timers (the runtime's timers are this process's; the
// environments are worker threads, which a fake clock does not reach and need not).
import { jest } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { LocalLambda, type FunctionSettings, type LocalLambdaOptions } from '../../lib/local/lambda-runtime.ts';
import { MAX_RESPONSE_PAYLOAD_BYTES } from '../../lib/local/lambda-environment.ts';
import { LambdaFunctionError, LambdaThrottledError } from '../../lib/local/lambda-errors.ts';

interface Report {
  invocation: number;
  environment: string;
  requestId: string;
  memory: string;
  remainingMs: number;
  logStream: string | undefined;
}

/** The channel between this test and its bundles' environments (any thread of this process). */
const CHANNEL = 'museum-lambda-runtime-test';

/**
 * Bundle code: `hold(tag)` tells the test that this environment waits under `tag` and waits until
 * the test releases `tag` (for every environment, or for this one).
 */
const HOLD = `
import { BroadcastChannel } from 'node:worker_threads';
const channel = new BroadcastChannel(${JSON.stringify(CHANNEL)});
const waiting = [];
channel.onmessage = ({ data }) => {
  for (const waiter of waiting.filter((w) => w.tag === data.release && (!data.environment || data.environment === environment))) {
    waiting.splice(waiting.indexOf(waiter), 1);
    waiter.resolve();
  }
};
const hold = (tag) => new Promise((resolve) => {
  waiting.push({ tag, resolve });
  channel.postMessage({ started: tag, environment });
});
`;

/** Reports its environment (a random id at Init) and how many invocations that environment has run. */
const PROBE_BUNDLE = `
import { randomUUID } from 'node:crypto';
const environment = randomUUID();
${HOLD}
let invocations = 0;
export async function handler(event, context) {
  invocations++;
  const invocation = invocations;
  if (event.hold) await hold(event.hold);
  if (event.fail) throw Object.assign(new Error('asked to fail'), { name: 'AskedToFail' });
  if (event.answerBytes) return 'x'.repeat(event.answerBytes - 2);
  return { invocation, environment, requestId: context.awsRequestId, memory: context.memoryLimitInMB, remainingMs: context.getRemainingTimeInMillis(), logStream: process.env.AWS_LAMBDA_LOG_STREAM_NAME };
}
`;

let directory: string;
let probeUrl: string;
const lambdas: LocalLambda[] = [];
const channel = new BroadcastChannel(CHANNEL);
/** The environments that started waiting, by tag, in the order they said so. */
const started = new Map<string, string[]>();
const startWatchers = new Set<() => void>();

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-lambda-runtime-'));
  await writeFile(join(directory, 'probe.mjs'), PROBE_BUNDLE);
  probeUrl = pathToFileURL(join(directory, 'probe.mjs')).href;
  channel.onmessage = (message) => {
    const { started: tag, environment } = (message as { data: { started: string; environment: string } }).data;
    started.set(tag, [...(started.get(tag) ?? []), environment]);
    for (const watcher of startWatchers) watcher();
  };
});

afterEach(() => {
  jest.useRealTimers();
});

afterAll(async () => {
  for (const lambda of lambdas) lambda.close();
  channel.close();
  await rm(directory, { recursive: true, force: true });
});

/** Resolves with the environments waiting under `tag` once `count` of them have said so. */
function waitingUnder(tag: string, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    const check = () => {
      const environments = started.get(tag) ?? [];
      if (environments.length < count) return;
      startWatchers.delete(check);
      resolve(environments);
    };
    startWatchers.add(check);
    check();
  });
}

/** Releases whatever waits under `tag` (only `environment`'s, when given): call it once they wait. */
function release(tag: string, environment?: string): void {
  channel.postMessage({ release: tag, environment });
}

/** The runtime's timers and clock (Init limits, timeouts, idle retirement) on jest's fake clock. */
function fakeClock(): void {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
}

function localLambda(options: LocalLambdaOptions): LocalLambda {
  const lambda = new LocalLambda(options);
  lambdas.push(lambda);
  return lambda;
}

/** A local Lambda holding one function, `probe`, with these settings. */
function probe(settings: Partial<FunctionSettings> = {}, idleMs?: number): LocalLambda {
  return localLambda({
    functions: { probe: { bundleUrl: probeUrl, settings: { memorySize: 256, timeoutSeconds: 5, ...settings } } },
    ...(idleMs === undefined ? {} : { idleMs }),
  });
}

const invoke = (lambda: LocalLambda, event: object = {}, name = 'probe') => lambda.invoke<Report>(name, event);
const environments = (reports: Report[]) => new Set(reports.map((report) => report.environment)).size;

test('invocations one after another run in one warm environment, which keeps its module state', async () => {
  const lambda = probe();
  const reports = [await invoke(lambda), await invoke(lambda), await invoke(lambda)];
  expect(reports.map((report) => report.invocation)).toEqual([1, 2, 3]);
  expect(environments(reports)).toBe(1);
});

test('overlapping invocations each get an environment of their own (a cold start each), reused warm by the next burst', async () => {
  const lambda = probe();
  // Each invocation is held until all four run, so none can wait for another's environment.
  const firstBurst = Array.from({ length: 4 }, () => invoke(lambda, { hold: 'first burst' }));
  await waitingUnder('first burst', 4);
  release('first burst');
  const first = await Promise.all(firstBurst);
  expect(environments(first)).toBe(4);
  expect(first.every((report) => report.invocation === 1)).toBe(true);
  expect(new Set(first.map((report) => report.logStream)).size).toBe(4);
  const secondBurst = Array.from({ length: 4 }, () => invoke(lambda, { hold: 'second burst' }));
  await waitingUnder('second burst', 4);
  release('second burst');
  const second = await Promise.all(secondBurst);
  expect(environments([...first, ...second])).toBe(4);
  expect(second.every((report) => report.invocation === 2)).toBe(true);
});

test('over the reserved concurrency an invocation is throttled at once (TooManyRequestsException), not queued', async () => {
  const lambda = probe({ reservedConcurrency: 2 });
  const running = [invoke(lambda, { hold: 'reserved' }), invoke(lambda, { hold: 'reserved' })];
  const throttled = await invoke(lambda).catch((error: unknown) => error);
  expect(throttled).toBeInstanceOf(LambdaThrottledError);
  expect(throttled).toMatchObject({ name: 'TooManyRequestsException', reason: 'ReservedFunctionConcurrentInvocationLimitExceeded' });
  await waitingUnder('reserved', 2);
  release('reserved');
  await Promise.all(running);
  await expect(invoke(lambda)).resolves.toMatchObject({ invocation: 2 });
});

test("functions without reserved concurrency share the account's concurrency less every reservation; over it an invocation is throttled", async () => {
  // An account of 3 concurrent executions, 1 of them reserved: the two other functions share 2.
  const settings = { memorySize: 256, timeoutSeconds: 5 };
  const lambda = localLambda({
    concurrentExecutions: 3,
    functions: {
      first: { bundleUrl: probeUrl, settings },
      second: { bundleUrl: probeUrl, settings },
      reserved: { bundleUrl: probeUrl, settings: { ...settings, reservedConcurrency: 1 } },
    },
  });
  const running = [invoke(lambda, { hold: 'account' }, 'first'), invoke(lambda, { hold: 'account' }, 'second')];
  const throttled = await invoke(lambda, {}, 'first').catch((error: unknown) => error);
  expect(throttled).toBeInstanceOf(LambdaThrottledError);
  expect(throttled).toMatchObject({ name: 'TooManyRequestsException', reason: 'ConcurrentInvocationLimitExceeded' });
  await expect(invoke(lambda, {}, 'second')).rejects.toMatchObject({ reason: 'ConcurrentInvocationLimitExceeded' });
  // The reservation is the reserved function's own, whatever the others use.
  await expect(invoke(lambda, {}, 'reserved')).resolves.toMatchObject({ invocation: 1 });
  await waitingUnder('account', 2);
  release('account');
  await Promise.all(running);
  await expect(invoke(lambda, {}, 'second')).resolves.toMatchObject({ invocation: 2 });
});

test('an invocation past the timeout fails with "Task timed out" and its environment is reset: the next starts cold', async () => {
  fakeClock();
  const lambda = probe({ timeoutSeconds: 1 });
  const before = await invoke(lambda);
  const late = invoke(lambda, { hold: 'never released' }).catch((caught: unknown) => caught);
  await waitingUnder('never released', 1);
  jest.advanceTimersByTime(999);
  jest.advanceTimersByTime(1);
  const error = await late;
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 1.00 seconds' });
  const after = await invoke(lambda);
  expect(after.environment).not.toBe(before.environment);
  expect(after.invocation).toBe(1);
});

test('a handler error fails that invocation only: the environment stays warm', async () => {
  const lambda = probe();
  await invoke(lambda);
  await expect(invoke(lambda, { fail: true })).rejects.toMatchObject({ errorType: 'AskedToFail', errorMessage: 'asked to fail' });
  await expect(invoke(lambda)).resolves.toMatchObject({ invocation: 3 });
});

test("a response over Lambda's 6 MB payload limit fails the invocation (Function.ResponseSizeTooLarge); one at the limit is returned", async () => {
  const lambda = probe();
  const atLimit = await lambda.invoke<string>('probe', { answerBytes: MAX_RESPONSE_PAYLOAD_BYTES });
  expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(MAX_RESPONSE_PAYLOAD_BYTES);
  const error = await lambda.invoke('probe', { answerBytes: MAX_RESPONSE_PAYLOAD_BYTES + 1 }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({
    errorType: 'Function.ResponseSizeTooLarge',
    errorMessage: 'Response payload size exceeded maximum allowed payload size (6291556 bytes).',
  });
});

test('an environment left idle is retired, and the next invocation starts cold', async () => {
  fakeClock();
  const lambda = probe({}, 200);
  const first = await invoke(lambda);
  jest.advanceTimersByTime(199);
  const warm = await invoke(lambda);
  expect(warm.environment).toBe(first.environment);
  jest.advanceTimersByTime(200);
  const next = await invoke(lambda);
  expect(next.environment).not.toBe(first.environment);
  expect(next.invocation).toBe(1);
});

test('each invocation gets its own context: a new request id, the function memory size, the time left of its timeout', async () => {
  const lambda = probe({ memorySize: 1769, timeoutSeconds: 10 });
  const a = await invoke(lambda);
  const b = await invoke(lambda);
  expect(a.requestId).not.toBe(b.requestId);
  expect(a.memory).toBe('1769');
  expect(a.remainingMs).toBeGreaterThan(0);
  expect(a.remainingMs).toBeLessThanOrEqual(10_000);
});

/**
 * A bundle whose Init appends a line to `<name>.inits` when it starts, waits under `<name> Init`
 * until released, and appends another line when it ends; its handler waits under `event.hold`.
 */
async function initBundle(name: string): Promise<string> {
  const log = join(directory, `${name}.inits`);
  const file = join(directory, `${name}.mjs`);
  await writeFile(
    file,
    `import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
const environment = randomUUID();
${HOLD}
appendFileSync(${JSON.stringify(log)}, 'start\\n');
await hold(${JSON.stringify(`${name} Init`)});
appendFileSync(${JSON.stringify(log)}, 'end\\n');
export async function handler(event, context) {
  if (event.hold) await hold(event.hold);
  return { remainingMs: context.getRemainingTimeInMillis() };
}
`,
  );
  return pathToFileURL(file).href;
}

/** The Init lines `initBundle` logged: how many started, and the most that ran at once. */
async function inits(name: string): Promise<{ started: number; mostAtOnce: number }> {
  const lines = (await readFile(join(directory, `${name}.inits`), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  let running = 0;
  let mostAtOnce = 0;
  for (const line of lines) {
    running += line.startsWith('start') ? 1 : -1;
    mostAtOnce = Math.max(mostAtOnce, running);
  }
  return { started: lines.filter((line) => line.startsWith('start')).length, mostAtOnce };
}

test('an Init past its limit is retried within the invocation, which then has what is left of the timeout', async () => {
  fakeClock();
  const bundleUrl = await initBundle('slow-first-init');
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 8 } } } });
  const result = lambda.invoke<{ remainingMs: number }>('fn', {});
  await waitingUnder('slow-first-init Init', 1);
  jest.advanceTimersByTime(10_000);
  // The retried Init takes 3 s of the function's 8 s timeout.
  const [, retried] = await waitingUnder('slow-first-init Init', 2);
  jest.advanceTimersByTime(3_000);
  release('slow-first-init Init', retried);
  const { remainingMs } = await result;
  expect((await inits('slow-first-init')).started).toBe(2);
  expect(remainingMs).toBeGreaterThan(0);
  expect(remainingMs).toBeLessThanOrEqual(5_000);
});

test('an Init that outlives the retry too fails the invocation (Runtime.InitTimeout)', async () => {
  fakeClock();
  const bundleUrl = await initBundle('slow-every-init');
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 2 } } } });
  const failed = lambda.invoke('fn', {}).catch((caught: unknown) => caught);
  await waitingUnder('slow-every-init Init', 1);
  jest.advanceTimersByTime(10_000);
  await waitingUnder('slow-every-init Init', 2);
  jest.advanceTimersByTime(2_000);
  const error = await failed;
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({ errorType: 'Runtime.InitTimeout' });
  expect((await inits('slow-every-init')).started).toBe(2);
});

test('a burst of cold starts initialises at most one environment per core at a time', async () => {
  const cores = availableParallelism();
  const bundleUrl = await initBundle('busy-init');
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 20 } } } });
  // Every invocation is held in its handler, so each needs an environment of its own.
  const results = Promise.all(Array.from({ length: 8 }, () => lambda.invoke('fn', { hold: 'busy handlers' })));
  // One Init released at a time, once the next ones have started: an Init slot freed lets exactly one more start.
  for (let next = 0; next < 8; next++) {
    const waiting = await waitingUnder('busy-init Init', Math.min(8, next + cores));
    release('busy-init Init', waiting[next]);
  }
  await waitingUnder('busy handlers', 8);
  release('busy handlers');
  expect(await results).toHaveLength(8);
  const { started, mostAtOnce } = await inits('busy-init');
  expect(started).toBe(8);
  expect(mostAtOnce).toBeLessThanOrEqual(cores);
});

test('an invocation waiting for an Init slot takes an environment of its function that becomes free first', async () => {
  const cores = availableParallelism();
  // Every Init slot is held by an Init of another function ...
  const slowUrl = await initBundle('slot-holder');
  const lambda = localLambda({
    functions: {
      probe: { bundleUrl: probeUrl, settings: { memorySize: 256, timeoutSeconds: 5 } },
      slow: { bundleUrl: slowUrl, settings: { memorySize: 256, timeoutSeconds: 10 } },
    },
  });
  const warm = await invoke(lambda);
  const holders = Array.from({ length: cores }, () => lambda.invoke('slow', {}));
  await waitingUnder('slot-holder Init', cores);
  // ... so the second of two overlapping invocations runs in the first one's environment once it is free.
  const busy = invoke(lambda, { hold: 'busy' });
  await waitingUnder('busy', 1);
  const waited = invoke(lambda);
  release('busy');
  expect([(await busy).environment, (await waited).environment]).toEqual([warm.environment, warm.environment]);
  expect((await waited).invocation).toBe(3);
  release('slot-holder Init');
  await Promise.all(holders);
});
