// What a client meets over HTTP when Lambda refuses or fails a proxy integration, through the local
// gateway with a Lambda of test functions (an authorizer that allows everything, a handler that
// answers what it is asked to): "If the Lambda API rejects the invocation request, API Gateway
// returns a 500 error code. If the function runs but returns an error, or returns a response in the
// wrong format, API Gateway returns a 502"
// (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html). A throttled
// handler is the first (Lambda's 429 TooManyRequestsException,
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html); a response over Lambda's
// 6 MB payload limit the second (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AUTHORIZER_HANDLER } from '../../functions/unrouted-functions.ts';
import { matchRoute } from '../../functions/route-matching.ts';
import { startLocalApiGateway, type LocalApiGateway } from '../../lib/local/local-api-gateway.ts';
import { LocalLambda } from '../../lib/local/lambda-runtime.ts';
import { MAX_RESPONSE_PAYLOAD_BYTES } from '../../lib/local/lambda-environment.ts';
import { basicAuthorization } from '../support/api-client.ts';

const ALLOW_ALL_AUTHORIZER = `export async function handler() {
  return { principalId: 'tester', policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] }, context: { role: 'viewer' } };
}
`;

/** Answers `?bytes=N` with a text body of N bytes; `?hold=1` first waits until the file `release` exists. */
function answeringHandler(release: string): string {
  return `import { existsSync } from 'node:fs';
export async function handler(event) {
  const query = event.queryStringParameters ?? {};
  if (query.hold) while (!existsSync(${JSON.stringify(release)})) await new Promise((resolve) => setTimeout(resolve, 20));
  return { statusCode: 200, headers: { 'Content-Type': 'text/plain' }, body: 'x'.repeat(Number(query.bytes ?? 2)) };
}
`;
}

const LIST = matchRoute('GET', '/special-events').route?.handler as string;
const unlimited = { rateLimit: 100_000, burstLimit: 100_000 };
let work: string;
let release: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-lambda-failures-'));
  release = join(work, 'release');
  await mkdir(join(work, AUTHORIZER_HANDLER));
  await writeFile(join(work, AUTHORIZER_HANDLER, 'index.mjs'), ALLOW_ALL_AUTHORIZER);
  await mkdir(join(work, LIST));
  await writeFile(join(work, LIST, 'index.mjs'), answeringHandler(release));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A gateway over the test functions, in an account of `concurrentExecutions` of which the authorizer reserves one. */
async function gatewayOver(concurrentExecutions?: number): Promise<LocalApiGateway> {
  const bundle = (name: string) => pathToFileURL(join(work, name, 'index.mjs')).href;
  const lambda = new LocalLambda({
    ...(concurrentExecutions === undefined ? {} : { concurrentExecutions }),
    functions: {
      [AUTHORIZER_HANDLER]: {
        bundleUrl: bundle(AUTHORIZER_HANDLER),
        settings: { memorySize: 256, timeoutSeconds: 10, reservedConcurrency: 1 },
      },
      [LIST]: { bundleUrl: bundle(LIST), settings: { memorySize: 256, timeoutSeconds: 10 } },
    },
  });
  return startLocalApiGateway({
    lambda,
    accessLog: () => undefined,
    throttleLimits: unlimited,
  });
}

const authorization = basicAuthorization('tester', 'any-password-at-all');
const list = (gateway: LocalApiGateway, query: string) =>
  fetch(`${gateway.url}/special-events?${query}`, { headers: { Authorization: authorization } });

/** Silences the gateway's report of each failed invocation (expected here) while `run` runs. */
async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    return await run();
  } finally {
    console.error = consoleError;
  }
}

test("a handler throttled by the account's unreserved concurrency is a 500 problem; once the concurrency is free the same request succeeds", async () => {
  // An account of 2 concurrent executions, 1 reserved by the authorizer: the handler has 1.
  const gateway = await gatewayOver(2);
  try {
    // The first request checks the credentials (cached from then on) and holds the handler's one execution.
    const held = list(gateway, 'hold=1');
    const holding = Date.now();
    // Until the held invocation holds the execution, another request may still pass (200) or meet
    // the authorizer's one execution in use (503); from then on it is refused.
    let answer = await quietly(() => list(gateway, 'bytes=2'));
    while ([200, 503].includes(answer.status)) {
      expect(Date.now() - holding).toBeLessThan(60_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await quietly(() => list(gateway, 'bytes=2'));
    }
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(await answer.json()).toMatchObject({ status: 500, type: 'https://museum.example/problems/internal-error' });
    await writeFile(release, '');
    expect((await held).status).toBe(200);
    // What a client does with a 500 from a throttled function (docs/API.md): retry after a pause.
    const retried = await list(gateway, 'bytes=2');
    expect(retried.status).toBe(200);
    expect(await retried.text()).toBe('xx');
  } finally {
    await rm(release, { force: true });
    await gateway.close();
  }
}, 120_000);

test("a handler answer over Lambda's 6 MB response payload limit is a 502 problem (INTEGRATION_FAILURE); one well within it is delivered whole", async () => {
  const gateway = await gatewayOver();
  try {
    const within = await list(gateway, `bytes=${5 * 1024 * 1024}`);
    expect(within.status).toBe(200);
    expect((await within.arrayBuffer()).byteLength).toBe(5 * 1024 * 1024);
    const over = await quietly(() => list(gateway, `bytes=${7 * 1024 * 1024}`));
    expect(over.status).toBe(502);
    expect(over.headers.get('content-type')).toBe('application/problem+json');
    expect(await over.json()).toMatchObject({ status: 502, type: 'https://museum.example/problems/bad-gateway' });
    // Just over the limit, counted in bytes of the result's JSON as Lambda counts them.
    const envelope = JSON.stringify({ statusCode: 200, headers: { 'Content-Type': 'text/plain' }, body: '' }).length;
    expect((await quietly(() => list(gateway, `bytes=${MAX_RESPONSE_PAYLOAD_BYTES - envelope + 1}`))).status).toBe(502);
    expect((await list(gateway, `bytes=${MAX_RESPONSE_PAYLOAD_BYTES - envelope}`)).status).toBe(200);
  } finally {
    await gateway.close();
  }
}, 120_000);
