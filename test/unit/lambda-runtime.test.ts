// The local run's model of Lambda's execution environments (lib/local/lambda-runtime.ts), on a
// small bundle that reports its own module state: one invocation at a time per environment, a new
// environment (cold start) when all are busy, warm ones reused, idle ones retired, reserved
// concurrency throttled at once, a timeout that resets its environment, a context per invocation,
// an Init past its 10 s limit retried within the invocation.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LambdaFunction, LambdaFunctionError, LambdaThrottledError, type LambdaFunctionOptions } from '../../lib/local/lambda-runtime.ts';

interface Report {
  invocation: number;
  environment: string;
  requestId: string;
  memory: string;
  remainingMs: number;
  logStream: string | undefined;
}

const BUNDLE = `
import { randomUUID } from 'node:crypto';
const environment = randomUUID();
let invocations = 0;
export async function handler(event, context) {
  invocations++;
  const invocation = invocations;
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  if (event.fail) throw Object.assign(new Error('asked to fail'), { name: 'AskedToFail' });
  return { invocation, environment, requestId: context.awsRequestId, memory: context.memoryLimitInMB, remainingMs: context.getRemainingTimeInMillis(), logStream: process.env.AWS_LAMBDA_LOG_STREAM_NAME };
}
`;

let directory: string;
let bundleUrl: string;
const functions: LambdaFunction[] = [];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-lambda-runtime-'));
  await writeFile(join(directory, 'index.mjs'), BUNDLE);
  bundleUrl = pathToFileURL(join(directory, 'index.mjs')).href;
});

afterAll(async () => {
  for (const fn of functions) fn.close();
  await rm(directory, { recursive: true, force: true });
});

function lambdaFunction(settings: Partial<LambdaFunctionOptions['settings']> = {}, idleMs?: number): LambdaFunction {
  const fn = new LambdaFunction({
    functionName: 'probe',
    bundleUrl,
    settings: { memorySize: 256, timeoutSeconds: 5, ...settings },
    ...(idleMs === undefined ? {} : { idleMs }),
  });
  functions.push(fn);
  return fn;
}

const invoke = (fn: LambdaFunction, event: object = {}) => fn.invoke<Report>(event);

test('invocations one after another run in one warm environment, which keeps its module state', async () => {
  const fn = lambdaFunction();
  const reports = [await invoke(fn), await invoke(fn), await invoke(fn)];
  expect(reports.map((report) => report.invocation)).toEqual([1, 2, 3]);
  expect(new Set(reports.map((report) => report.environment)).size).toBe(1);
  expect(fn.coldStarts).toBe(1);
});

test('overlapping invocations each get an environment of their own (a cold start each), reused warm by the next burst', async () => {
  const fn = lambdaFunction();
  const first = await Promise.all(Array.from({ length: 4 }, () => invoke(fn, { sleepMs: 300 })));
  expect(new Set(first.map((report) => report.environment)).size).toBe(4);
  expect(first.every((report) => report.invocation === 1)).toBe(true);
  expect(new Set(first.map((report) => report.logStream)).size).toBe(4);
  expect(fn.coldStarts).toBe(4);
  const second = await Promise.all(Array.from({ length: 4 }, () => invoke(fn, { sleepMs: 300 })));
  expect(fn.coldStarts).toBe(4);
  expect(second.every((report) => report.invocation === 2)).toBe(true);
});

test('over the reserved concurrency an invocation is throttled at once (TooManyRequestsException), not queued', async () => {
  const fn = lambdaFunction({ reservedConcurrency: 2 });
  const running = [invoke(fn, { sleepMs: 500 }), invoke(fn, { sleepMs: 500 })];
  const throttled = await invoke(fn).catch((error: unknown) => error);
  expect(throttled).toBeInstanceOf(LambdaThrottledError);
  expect((throttled as LambdaThrottledError).name).toBe('TooManyRequestsException');
  await Promise.all(running);
  expect(fn.environments).toBe(2);
  await expect(invoke(fn)).resolves.toMatchObject({ invocation: 2 });
});

test('an invocation past the timeout fails with "Task timed out" and its environment is reset: the next starts cold', async () => {
  const fn = lambdaFunction({ timeoutSeconds: 1 });
  const before = await invoke(fn);
  const error = await invoke(fn, { sleepMs: 3_000 }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 1.00 seconds' });
  const after = await invoke(fn);
  expect(after.environment).not.toBe(before.environment);
  expect(after.invocation).toBe(1);
  expect(fn.coldStarts).toBe(2);
});

test('a handler error fails that invocation only: the environment stays warm', async () => {
  const fn = lambdaFunction();
  await invoke(fn);
  await expect(invoke(fn, { fail: true })).rejects.toMatchObject({ errorType: 'AskedToFail', errorMessage: 'asked to fail' });
  await expect(invoke(fn)).resolves.toMatchObject({ invocation: 3 });
  expect(fn.coldStarts).toBe(1);
});

test('an environment left idle is retired, and the next invocation starts cold', async () => {
  const fn = lambdaFunction({}, 200);
  const first = await invoke(fn);
  expect(fn.environments).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 600));
  expect(fn.environments).toBe(0);
  const next = await invoke(fn);
  expect(next.environment).not.toBe(first.environment);
  expect(fn.coldStarts).toBe(2);
});

test('each invocation gets its own context: a new request id, the function memory size, the time left of its timeout', async () => {
  const fn = lambdaFunction({ memorySize: 1769, timeoutSeconds: 10 });
  const a = await invoke(fn);
  const b = await invoke(fn);
  expect(a.requestId).not.toBe(b.requestId);
  expect(a.memory).toBe('1769');
  expect(a.remainingMs).toBeGreaterThan(0);
  expect(a.remainingMs).toBeLessThanOrEqual(10_000);
});

/** A bundle whose Init sleeps `initMs`: every time, or only the first time (a marker file records it). */
async function slowInitFunction(
  name: string,
  initMs: number,
  onlyFirst: boolean,
  timeoutSeconds: number,
  initLimitMs: number,
): Promise<LambdaFunction> {
  const marker = join(directory, `${name}-initialized`);
  const file = join(directory, `${name}.mjs`);
  await writeFile(
    file,
    `import { existsSync, writeFileSync } from 'node:fs';
const slow = ${onlyFirst ? `!existsSync(${JSON.stringify(marker)})` : 'true'};
writeFileSync(${JSON.stringify(marker)}, '');
if (slow) await new Promise((resolve) => setTimeout(resolve, ${initMs}));
export async function handler(event, context) { return { remainingMs: context.getRemainingTimeInMillis() }; }
`,
  );
  const fn = new LambdaFunction({
    functionName: name,
    bundleUrl: pathToFileURL(file).href,
    settings: { memorySize: 256, timeoutSeconds },
    initLimitMs,
  });
  functions.push(fn);
  return fn;
}

test('an Init past its limit is retried within the invocation, which then has what is left of the timeout', async () => {
  const fn = await slowInitFunction('slow-first-init', 2_000, true, 5, 300);
  const result = await fn.invoke<{ remainingMs: number }>({});
  expect(fn.coldStarts).toBe(2);
  expect(result.remainingMs).toBeGreaterThan(0);
  expect(result.remainingMs).toBeLessThanOrEqual(5_000);
});

test('an Init that outlives the retry too fails the invocation (Runtime.InitTimeout)', async () => {
  const fn = await slowInitFunction('slow-every-init', 3_000, false, 1, 300);
  const error = await fn.invoke({}).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LambdaFunctionError);
  expect(error).toMatchObject({ errorType: 'Runtime.InitTimeout' });
  expect(fn.coldStarts).toBe(2);
});
