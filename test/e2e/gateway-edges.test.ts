// What the local gateway answers before any handler runs: requests Node's HTTP parser refuses,
// targets that are not paths of this API, methods a resource does not have, the service index,
// and a flood of wrong passwords against the authorizer's concurrency cap. Raw sockets where
// fetch() would refuse to send the request at all.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROBLEM_TYPE_BASE } from '../../functions/events/problems.ts';
import { AUTHORIZER_HANDLER } from '../../functions/unrouted-functions.ts';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';
import { listenOnLoopback, startLocalApiGateway } from '../../lib/local/local-api-gateway.ts';
import { deployedFunctions } from '../../lib/local/deployed-functions.ts';
import { LocalLambda } from '../../lib/local/lambda-runtime.ts';
import { apiRetrying, basicAuthorization } from '../support/api-client.ts';
import { DEPLOYED_THROTTLING, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are and reads the answer until the server closes the connection. */
function rawRequest(request: string | Buffer, port = new URL(testEnvironment().url).port): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(new Error(`no answer to ${String(request).slice(0, 40)}`)), 10_000);
    socket.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = data.toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: headers['transfer-encoding'] === 'chunked' ? dechunk(body) : body,
      });
    });
  });
}

function dechunk(body: string): string {
  let rest = body;
  let out = '';
  for (;;) {
    const size = parseInt(rest, 16);
    if (!size) return out;
    const start = rest.indexOf('\r\n') + 2;
    out += rest.slice(start, start + size);
    rest = rest.slice(start + size + 2);
  }
}

function expectProblem(response: RawResponse, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json');
  const problem = JSON.parse(response.body) as { type: string; status: number; title: string; detail: string };
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- jest's asymmetric matchers are typed any
  expect(problem).toEqual(expect.objectContaining({ status, title: expect.any(String), detail: expect.any(String) }));
  // Every problem's type is under the API's namespace (docs/API.md, "Problems"), never about:blank.
  expect(problem.type.startsWith(PROBLEM_TYPE_BASE)).toBe(true);
  return problem;
}

const host = 'Host: 127.0.0.1\r\nConnection: close\r\n';

describe('requests the HTTP parser refuses are answered with problem+json', () => {
  test.each([
    ['a header over 16 KB', `GET /v1.1/special-events HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431],
    ['a URL over 16 KB', `GET /v1.1/special-events?q=${'a'.repeat(17_000)} HTTP/1.1\r\n${host}\r\n`, 431],
    ['a NUL in a header', `GET /v1.1/special-events HTTP/1.1\r\n${host}X-Nul: a\u0000b\r\n\r\n`, 400],
    ['an obs-fold header', `GET /v1.1/special-events HTTP/1.1\r\n${host}X-Fold: a\r\n b\r\n\r\n`, 400],
    ['a lowercase method', `get /v1.1/special-events HTTP/1.1\r\n${host}\r\n`, 400],
    [
      'Content-Length with chunked',
      `POST /v1.1/special-events HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
    ],
    ['a method HTTP does not know', `BREW /v1.1/special-events HTTP/1.1\r\n${host}\r\n`, 501],
    ['CONNECT', `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}\r\n`, 501],
  ])('%s', async (_name, request, status) => {
    expectProblem(await rawRequest(request), status);
  });
});

describe('while the local API is starting', () => {
  test('a request the parser refuses is answered with problem+json too', async () => {
    const server = await listenOnLoopback(0);
    try {
      const { port } = server.address() as AddressInfo;
      expectProblem(await rawRequest(`GET /v1.1/special-events HTTP/1.1\r\n${host}X-Nul: a\u0000b\r\n\r\n`, String(port)), 400);
      expectProblem(await rawRequest(`GET /v1.1/special-events HTTP/1.1\r\n${host}\r\n`, String(port)), 503);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('request targets that are not paths of this API', () => {
  test.each(['//v1.1/special-events', '//evil.example/v1.1/special-events', '/v1.1//special-events'])(
    '%s is a 404 problem, never a host',
    async (target) => {
      const problem = expectProblem(
        await rawRequest(
          `GET ${target} HTTP/1.1\r\n${host}Authorization: ${basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password)}\r\n\r\n`,
        ),
        404,
      );
      expect(problem.detail).not.toMatch(/stack|Error:/);
    },
  );

  test.each([
    '/v1.1/special-events/..',
    '/v1.1/special-events/%2e%2E',
    '/v1.1/special-events/./x',
    '/v1.1/docs/..',
    '/v1.1/%2E/openapi.json',
  ])('%s (a dot-segment) is a 404 problem, not resolved into another resource', async (target) => {
    expectProblem(
      await rawRequest(
        `GET ${target} HTTP/1.1\r\n${host}Authorization: ${basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password)}\r\n\r\n`,
      ),
      404,
    );
  });

  test('the absolute form keeps only its path (the host in it is not a route)', async () => {
    const response = await rawRequest(`GET http://evil.example/v1.1 HTTP/1.1\r\n${host}\r\n`);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual(expect.objectContaining({ name: 'Museum Special Events API' }));
  });
});

describe('the access log', () => {
  test.each([
    ['an answered request', (target: string) => `GET ${target} HTTP/1.1\r\n${host}\r\n`],
    ['a request the parser refuses', (target: string) => `GET ${target} HTTP/1.1\r\n${host}X-Nul: a\u0000b\r\n\r\n`],
  ])('never holds the userinfo or query of an absolute-form target (%s)', async (_name, request) => {
    const secret = `secret${randomBytes(8).toString('hex')}`;
    const marker = `/v1.1/log-marker-${randomBytes(8).toString('hex')}`;
    await rawRequest(request(`http://user:${secret}@${secret}.example${marker}?token=${secret}`));
    const { logFile } = testEnvironment();
    let log = '';
    for (
      const started = Date.now();
      !log.includes(marker) && Date.now() - started < 5_000;
      await new Promise((resolve) => setTimeout(resolve, 50))
    ) {
      log = await readFile(logFile, 'utf8');
    }
    expect(log).toContain(marker);
    expect(log).not.toContain(secret);
  });
});

describe('methods', () => {
  test.each([
    ['PUT', '/special-events', 'GET, HEAD, POST, OPTIONS'],
    ['DELETE', '/special-events', 'GET, HEAD, POST, OPTIONS'],
    ['POST', '/special-events/5f0c6a4e-7d0e-4f6a-9a40-3c6f3c2b1a10', 'GET, HEAD, PATCH, DELETE, OPTIONS'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const response = await fetch(`${testEnvironment().url}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    // One order everywhere (route-matching.ts allowHeader), so a client may compare the lists as strings.
    expect(response.headers.get('allow')).toBe(allow);
  });

  test.each([
    ['POST', ''],
    ['PUT', '/openapi.json'],
    ['DELETE', '/docs'],
  ])('%s on the public document %s is 405 with Allow: GET, HEAD, OPTIONS, and OPTIONS names the same', async (method, path) => {
    const response = await fetch(`${testEnvironment().url}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const options = await fetch(`${testEnvironment().url}${path}`, { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
  });

  test.each([
    ['/special-events', 'GET, HEAD, POST, OPTIONS'],
    ['/special-events/5f0c6a4e-7d0e-4f6a-9a40-3c6f3c2b1a10', 'GET, HEAD, PATCH, DELETE, OPTIONS'],
  ])('OPTIONS %s is 204 with Allow: %s, without credentials', async (path, allow) => {
    const response = await fetch(`${testEnvironment().url}${path}`, { method: 'OPTIONS' });
    expect([response.status, response.headers.get('allow'), await response.text()]).toEqual([204, allow, '']);
  });
});

describe('the base URL and the documents', () => {
  test('GET /v1.1 is the service index with RFC 8631 links, without credentials', async () => {
    const response = await fetch(testEnvironment().url);
    expect(response.status).toBe(200);
    expect(response.headers.get('link')).toMatch(/rel="service-desc"/);
    expect(response.headers.get('link')).toMatch(/rel="service-doc"/);
    const index = (await response.json()) as { links: Record<string, string> };
    // Its links, resolved against the URL a user was given, reach the documents.
    expect((await fetch(new URL(index.links['service-desc'] as string, testEnvironment().url))).status).toBe(200);
    expect((await fetch(new URL(index.links['service-doc'] as string, testEnvironment().url))).status).toBe(200);
  });

  // API Gateway matches one trailing slash to the resource without it (see gateway-fidelity.test.ts).
  test.each([
    ['/', 'GET, HEAD, OPTIONS'],
    ['/docs/', 'GET, HEAD, OPTIONS'],
    ['/openapi.json/', 'GET, HEAD, OPTIONS'],
  ])('/v1.1%s answers as the document without the slash: 200 for GET, 405 with Allow: %s for POST', async (path, allow) => {
    const response = await fetch(`${testEnvironment().url}${path}`, { redirect: 'manual' });
    expect(response.status).toBe(200);
    const post = await fetch(`${testEnvironment().url}${path}`, { method: 'POST' });
    expect([post.status, post.headers.get('allow'), post.headers.get('content-type')]).toEqual([405, allow, 'application/problem+json']);
  });

  test('/favicon.ico is the 404 problem of any path outside the API, as API Gateway answers it', async () => {
    const response = await fetch(new URL('/favicon.ico', testEnvironment().url));
    expect([response.status, response.headers.get('content-type')]).toEqual([404, 'application/problem+json']);
  });
});

describe('a request body that is not UTF-8', () => {
  test('is refused with a 400 problem, never a 5xx', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const response = await fetch(`${testEnvironment().url}/special-events`, {
      method: 'POST',
      headers: {
        Authorization: basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password),
        'Content-Type': 'application/json',
      },
      body,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('a flood of wrong passwords', () => {
  let flooded: OwnLocalApi | undefined;

  beforeAll(async () => {
    // Its own gateway process (on the shared DynamoDB Local), so that the flood slows no other test,
    // with the deployed method throttling (lib/local/gateway-throttling.ts).
    flooded = await startOwnLocalApi('flood', DEPLOYED_THROTTLING);
  }, LOCAL_API_START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await flooded?.stop();
  });

  test("is answered 401, the method throttle's 429 or the documented 503 with Retry-After, never another 5xx, and a right password gets in", async () => {
    const right = basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password);
    const send = (authorization: string) => fetch(`${flooded?.url}/special-events`, { headers: { Authorization: authorization } });
    // The same wrong password 40 times at once and 40 different ones for the same user: within the
    // method's burst, so each reaches the authorizer (over it, the method's 429 would come first).
    const repeated = basicAuthorization(TEST_USERS.editor.username, 'not-the-password-1');
    const distinct = Array.from({ length: 40 }, () =>
      basicAuthorization(TEST_USERS.editor.username, `guess-${randomBytes(8).toString('hex')}`),
    );
    const responses = await Promise.all([...Array.from({ length: 40 }, () => send(repeated)), ...distinct.map(send), send(right)]);
    const legitimate = responses.pop() as Response;
    for (const response of responses) {
      expect([401, 429, 503]).toContain(response.status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      if (response.status !== 401) expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // No wrong password ever got in (the statuses above), and the right one was never refused.
    expect([200, 429, 503]).toContain(legitimate.status);
    // As a client does: 429 and 503 are answers to retry after their Retry-After. On a loaded
    // machine a verification in a new environment can outlive the authorizer's timeout (503), so
    // the retries, not the clock, decide; the test's time limit only bounds a hang.
    const sendRetrying = (authorization: string) =>
      apiRetrying('GET', '/special-events', { baseUrl: flooded?.url as string, as: { header: authorization } }, { attempts: 20 });
    // Once the flood has been answered, the right password gets in and the wrong one is refused.
    expect((await sendRetrying(right)).status).toBe(200);
    expect((await sendRetrying(repeated)).status).toBe(401);
  }, 400_000);
});

describe('an authorizer that outlives its timeout', () => {
  // Lambda stops an invocation at its timeout and resets its environment; over the reserved
  // concurrency it throttles at once; API Gateway answers both AUTHORIZER_FAILURE (here 503).
  // https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html
  test('is stopped at its timeout (503) and its environment reset, and over the reserved concurrency an invocation is throttled (503) without running', async () => {
    // A fault: an authorizer that hangs until told to finish (through files: the gateway imports it
    // as a module of its own), counting its invocations.
    const work = await mkdtemp(join(tmpdir(), 'museum-slow-authorizer-'));
    const release = join(work, 'release');
    const invocations = join(work, 'invocations');
    await mkdir(join(work, 'authorizer'));
    await writeFile(
      join(work, 'authorizer', 'index.mjs'),
      `import { appendFileSync, existsSync } from 'node:fs';
export async function handler() {
  appendFileSync(${JSON.stringify(invocations)}, 'x');
  while (!existsSync(${JSON.stringify(release)})) await new Promise((resolve) => setTimeout(resolve, 20));
  throw new Error('Unauthorized');
}
`,
    );
    const count = async () => (await readFile(invocations, 'utf8').catch(() => '')).length;
    const unlimited = { rateLimit: 100_000, burstLimit: 100_000 };
    // The deployed memory, with a reserved concurrency of a few and a short timeout, so that every
    // environment is surely busy before the first one times out, however loaded the machine.
    const settings = { memorySize: FUNCTION_SETTINGS.authorizer.memorySize, timeoutSeconds: 5, reservedConcurrency: 4 };
    // The test's own Lambda: the stack's functions, but this authorizer with these settings.
    const authorizer = { bundleUrl: pathToFileURL(join(work, AUTHORIZER_HANDLER, 'index.mjs')).href, settings };
    const gateway = await startLocalApiGateway({
      lambda: new LocalLambda({ functions: { ...deployedFunctions(work), [AUTHORIZER_HANDLER]: authorizer } }),
      accessLog: () => undefined,
      throttleLimits: unlimited,
    });
    const consoleError = console.error;
    console.error = () => undefined; // the gateway reports each timed-out or throttled authorizer: expected here
    try {
      const send = (user: string) =>
        fetch(`${gateway.url}/special-events`, { headers: { Authorization: basicAuthorization(user, 'some-password-1') } });
      const cap = settings.reservedConcurrency;
      const hanging = Promise.all(Array.from({ length: cap }, (_, i) => send(`user${i}`)));
      const state = { settled: false };
      void hanging.finally(() => (state.settled = true));
      while ((await count()) < cap && !state.settled) await new Promise((resolve) => setTimeout(resolve, 50));
      // Every reserved environment is busy: throttled, and the authorizer never ran for it.
      expect((await send('another')).status).toBe(503);
      expect(await count()).toBe(cap);
      expect((await hanging).map((response) => response.status)).toEqual(Array(cap).fill(503));
      // The timed-out invocations were stopped with their environments: releasing the hang now
      // changes nothing of theirs, and the next login runs in a new environment.
      await writeFile(release, '');
      expect((await send('after-timeout')).status).toBe(401);
      expect(await count()).toBe(cap + 1);
    } finally {
      console.error = consoleError;
      await writeFile(release, '').catch(() => undefined);
      await gateway.close();
      await rm(work, { recursive: true, force: true });
    }
  }, 120_000);
});
