// The local run's model of Lambda's execution environments (lib/local/lambda-runtime.ts), on small
// bundles that report their own module state: one invocation at a time per environment, a new
// environment (cold start) when all are busy, warm ones reused, idle ones retired, reserved and
// account concurrency throttled at once, a timeout that resets its environment, a context per
// invocation, an Init past its 10 s limit retried within the invocation, at most one Init per core
// at a time, and a response over Lambda's 6 MB payload limit refused.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
// https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  LambdaFunctionError,
  LambdaThrottledError,
  LocalLambda,
  MAX_RESPONSE_PAYLOAD_BYTES,
  type FunctionSettings,
  type LocalLambdaOptions,
} from '../../lib/local/lambda-runtime.ts';

interface Report {
  invocation: number;
  environment: string;
  requestId: string;
  memory: string;
  remainingMs: number;
  logStream: string | undefined;
}

/** Reports its environment (a random id at Init) and how many invocations that environment has run. */
const PROBE_BUNDLE = `
import { randomUUID } from 'node:crypto';
const environment = randomUUID();
let invocations = 0;
export async function handler(event, context) {
  invocations++;
  const invocation = invocations;
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  if (event.fail) throw Object.assign(new Error('asked to fail'), { name: 'AskedToFail' });
  if (event.answerBytes) return 'x'.repeat(event.answerBytes - 2);
  return { invocation, environment, requestId: context.awsRequestId, memory: context.memoryLimitInMB, remainingMs: context.getRemainingTimeInMillis(), logStream: process.env.AWS_LAMBDA_LOG_STREAM_NAME };
}
`;

let directory: string;
let probeUrl: string;
const lambdas: LocalLambda[] = [];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-lambda-runtime-'));
  await writeFile(join(directory, 'probe.mjs'), PROBE_BUNDLE);
  probeUrl = pathToFileURL(join(directory, 'probe.mjs')).href;
});

afterAll(async () => {
  for (const lambda of lambdas) lambda.close();
  await rm(directory, { recursive: true, force: true });
});

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
  // Each invocation outlasts every Init, so none can wait for another's environment.
  const first = await Promise.all(Array.from({ length: 4 }, () => invoke(lambda, { sleepMs: 1_500 })));
  expect(environments(first)).toBe(4);
  expect(first.every((report) => report.invocation === 1)).toBe(true);
  expect(new Set(first.map((report) => report.logStream)).size).toBe(4);
  const second = await Promise.all(Array.from({ length: 4 }, () => invoke(lambda, { sleepMs: 1_500 })));
  expect(environments([...first, ...second])).toBe(4);
  expect(second.every((report) => report.invocation === 2)).toBe(true);
});

test('over the reserved concurrency an invocation is throttled at once (TooManyRequestsException), not queued', async () => {
  const lambda = probe({ reservedConcurrency: 2 });
  const running = [invoke(lambda, { sleepMs: 500 }), invoke(lambda, { sleepMs: 500 })];
  const throttled = await invoke(lambda).catch((error: unknown) => error);
  expect(throttled).toBeInstanceOf(LambdaThrottledError);
  expect(throttled).toMatchObject({ name: 'TooManyRequestsException', reason: 'ReservedFunctionConcurrentInvocationLimitExceeded' });
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
  const running = [invoke(lambda, { sleepMs: 800 }, 'first'), invoke(lambda, { sleepMs: 800 }, 'second')];
  const throttled = await invoke(lambda, {}, 'first').catch((error: unknown) => error);
  expect(throttled).toBeInstanceOf(LambdaThrottledError);
  expect(throttled).toMatchObject({ name: 'TooManyRequestsException', reason: 'ConcurrentInvocationLimitExceeded' });
  await expect(invoke(lambda, {}, 'second')).rejects.toMatchObject({ reason: 'ConcurrentInvocationLimitExceeded' });
  // The reservation is the reserved function's own, whatever the others use.
  await expect(invoke(lambda, {}, 'reserved')).resolves.toMatchObject({ invocation: 1 });
  await Promise.all(running);
  await expect(invoke(lambda, {}, 'second')).resolves.toMatchObject({ invocation: 2 });
});

test('an invocation past the timeout fails with "Task timed out" and its environment is reset: the next starts cold', async () => {
  const lambda = probe({ timeoutSeconds: 1 });
  const before = await invoke(lambda);
  const error = await invoke(lambda, { sleepMs: 3_000 }).catch((caught: unknown) => caught);
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
  const lambda = probe({}, 200);
  const first = await invoke(lambda);
  await new Promise((resolve) => setTimeout(resolve, 600));
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
 * A bundle whose Init appends a line to `<name>.inits` when it starts and another when it ends, and
 * in between sleeps `sleepMs` (every time, or only the first time) or spins the CPU for `spinMs`.
 */
async function initBundle(name: string, init: { sleepMs?: number; onlyFirst?: boolean; spinMs?: number }): Promise<string> {
  const log = join(directory, `${name}.inits`);
  const file = join(directory, `${name}.mjs`);
  await writeFile(
    file,
    `import { appendFileSync, existsSync } from 'node:fs';
const slow = ${init.onlyFirst ? `!existsSync(${JSON.stringify(log)})` : 'true'};
appendFileSync(${JSON.stringify(log)}, 'start ' + Date.now() + '\\n');
if (slow) await new Promise((resolve) => setTimeout(resolve, ${init.sleepMs ?? 0}));
for (const until = Date.now() + ${init.spinMs ?? 0}; Date.now() < until; );
appendFileSync(${JSON.stringify(log)}, 'end ' + Date.now() + '\\n');
export async function handler(event, context) {
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
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
  // The limit leaves the worker time to start and reach the bundle, on a loaded machine too.
  const bundleUrl = await initBundle('slow-first-init', { sleepMs: 4_000, onlyFirst: true });
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 8 } } }, initLimitMs: 1_500 });
  const result = await lambda.invoke<{ remainingMs: number }>('fn', {});
  expect((await inits('slow-first-init')).started).toBe(2);
  expect(result.remainingMs).toBeGreaterThan(0);
  expect(result.remainingMs).toBeLessThanOrEqual(8_000);
});

test('an Init that outlives the retry too fails the invocation (Runtime.InitTimeout)', async () => {
  const bundleUrl = await initBundle('slow-every-init', { sleepMs: 6_000 });
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 2 } } }, initLimitMs: 1_500 });
  const error = await lambda.invoke('fn', {}).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({ errorType: 'Runtime.InitTimeout' });
  expect((await inits('slow-every-init')).started).toBe(2);
});

test('a burst of cold starts initialises at most one environment per core at a time, and every Init finishes within its limit', async () => {
  // Each Init spins the CPU for 300 ms: all eight at once on two cores would take the sum of them.
  const bundleUrl = await initBundle('busy-init', { spinMs: 300 });
  const lambda = localLambda({ functions: { fn: { bundleUrl, settings: { memorySize: 256, timeoutSeconds: 20 } } } });
  const results = await Promise.all(Array.from({ length: 8 }, () => lambda.invoke('fn', { sleepMs: 6_000 })));
  expect(results).toHaveLength(8);
  const { started, mostAtOnce } = await inits('busy-init');
  expect(started).toBe(8);
  expect(mostAtOnce).toBeLessThanOrEqual(availableParallelism());
}, 60_000);

test('an invocation waiting for an Init slot takes an environment of its function that becomes free first', async () => {
  // Every Init slot is held by a slow Init of another function ...
  const slowUrl = await initBundle('slot-holder', { sleepMs: 3_000 });
  const lambda = localLambda({
    functions: {
      probe: { bundleUrl: probeUrl, settings: { memorySize: 256, timeoutSeconds: 5 } },
      slow: { bundleUrl: slowUrl, settings: { memorySize: 256, timeoutSeconds: 10 } },
    },
  });
  const warm = await invoke(lambda);
  const holders = Array.from({ length: availableParallelism() }, () => lambda.invoke('slow', {}));
  while ((await inits('slot-holder')).started < availableParallelism()) await new Promise((resolve) => setTimeout(resolve, 20));
  // ... so the second of two overlapping invocations runs in the first one's environment once it is free.
  const [busy, waited] = await Promise.all([invoke(lambda, { sleepMs: 300 }), invoke(lambda)]);
  expect([busy.environment, waited.environment]).toEqual([warm.environment, warm.environment]);
  expect(waited.invocation).toBe(3);
  await Promise.all(holders);
}, 30_000);
