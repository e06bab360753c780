// The local gateway does what API Gateway does with a request, as AWS documents it, and nothing
// else: each test names the documentation page it follows (docs/FIDELITY.md lists them).
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { api, createEvent } from '../support/api-client.ts';
import { testEnvironment } from '../support/test-environment.ts';

const url = (path: string) => `${testEnvironment().url}${path}`;

describe('a trailing slash (REST APIs match /x/ to the resource /x)', () => {
  test('/v1.1/ answers as /v1.1: the same index for GET, 405 with Allow for POST, 204 with Allow for OPTIONS', async () => {
    const [index, slashed] = await Promise.all([fetch(url('')), fetch(url('/'), { redirect: 'manual' })]);
    expect(slashed.status).toBe(200);
    expect(await slashed.text()).toBe(await index.text());
    const post = await fetch(url('/'), { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
    const options = await fetch(url('/'), { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
  });

  test('/v1.1/special-events/ is the list resource: behind the authorizer (401 without credentials)', async () => {
    const response = await fetch(url('/special-events/'));
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="museum", charset="UTF-8"']);
  });
});

describe('X-HTTP-Method-Override (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html)', () => {
  test('a GET naming DELETE is routed as DELETE, as API Gateway does, and the handler refuses it with 400: the event is kept', async () => {
    const event = await createEvent();
    const overridden = await api<{ type: string; detail: string }>('GET', `/special-events/${event.eventId}`, {
      headers: { 'X-HTTP-Method-Override': 'DELETE' },
      skipContract: true,
    });
    expect([overridden.status, overridden.body.type.split('/').pop()]).toEqual([400, 'validation-error']);
    expect(overridden.body.detail).toMatch(/X-HTTP-Method-Override is not accepted/);
    expect((await api('GET', `/special-events/${event.eventId}`)).status).toBe(200);
  });

  test('a GET of the service index naming POST is routed as POST: 405, never the index', async () => {
    const response = await fetch(url(''), { headers: { 'X-HTTP-Method-Override': 'POST' } });
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
  });
});

describe('Content-Type on every integration response (known-issues page)', () => {
  test('a 204 and a 304 from a handler carry Content-Type: application/json, as API Gateway adds it', async () => {
    const event = await createEvent();
    const notModified = await api('GET', `/special-events/${event.eventId}`, { headers: { 'If-None-Match': '"1"' }, skipContract: true });
    expect([notModified.status, notModified.headers.get('content-type')]).toEqual([304, 'application/json']);
    const deleted = await api('DELETE', `/special-events/${event.eventId}`, { skipContract: true });
    expect([deleted.status, deleted.headers.get('content-type')]).toEqual([204, 'application/json']);
  });
});

describe('a request Content-Encoding (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-make-request-with-compressed-payload.html)', () => {
  test('an unsupported coding, or bytes that are not so coded, is the gateway 415, before any handler', async () => {
    for (const [coding, body] of [
      ['br', '{}'],
      ['gzip', '{"not":"gzip"}'],
    ] as const) {
      const response = await api<{ detail: string }>('POST', '/special-events', {
        rawBody: body,
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': coding },
      });
      // The UNSUPPORTED_MEDIA_TYPE gateway response, not the handler's problem.
      expect([response.status, response.body.detail, response.headers.get('accept-encoding')]).toEqual([
        415,
        'The request body must be sent as it is, without a Content-Encoding',
        'identity',
      ]);
    }
  });

  test('a gzip body is decoded by the gateway; the handler, seeing the header, answers its own 415 problem and writes nothing', async () => {
    const response = await api<{ type: string }>('POST', '/special-events', {
      rawBody: gzipSync(JSON.stringify({ name: 'x' })),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      skipContract: true,
    });
    expect([response.status, response.body.type.split('/').pop()]).toEqual([415, 'unsupported-media-type']);
  });
});

describe('payload limits (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html)', () => {
  test("a body whose event passes Lambda's 6 MB invocation limit never reaches the handler: API Gateway's uncustomisable 413", async () => {
    const response = await api<{ message: string }>('POST', '/special-events', {
      rawBody: 'x'.repeat(6 * 1024 * 1024),
      headers: { 'Content-Type': 'application/json' },
      skipContract: true,
    });
    expect([response.status, response.headers.get('content-type'), response.body]).toEqual([
      413,
      'application/json',
      { message: 'Request Too Long' },
    ]);
  });
});

/** Sends raw bytes to the local API and returns all it answers until it closes the connection (10 s: held open). */
function rawExchange(bytes: string): Promise<string> {
  const { port } = new URL(testEnvironment().url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let data = '';
    const timer = setTimeout(() => socket.destroy(new Error(`held open; got ${JSON.stringify(data)}`)), 10_000);
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
  });
}

describe('a malformed chunked body (RFC 9112 §7.1)', () => {
  test('is answered 400 and the connection is closed, never held open', async () => {
    const answer = await rawExchange(
      'POST /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/application\/problem\+json/);
    expect(answer.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
  });

  test.each([
    ['a method the resource lacks (a MOCK 405)', 'POST /v1.1/ HTTP/1.1'],
    ['a path below the base path that names nothing', 'POST /v1.1/nothing-here HTTP/1.1'],
    ['a path outside the base path', 'POST /elsewhere HTTP/1.1'],
  ])(
    'on %s gets that answer (then at most the framing problem), the connection closes, and the server keeps answering',
    async (_case, requestLine) => {
      const answer = await rawExchange(
        `${requestLine}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n0\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(answer.match(/^HTTP\/1\.1 /gm)?.length).toBeLessThanOrEqual(2);
      expect((await fetch(testEnvironment().url)).status).toBe(200);
    },
  );
});
