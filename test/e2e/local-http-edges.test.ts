// The local API's HTTP/1.1 edge as a strict server's (RFC 9112), over raw sockets (fetch would
// not send these requests): every refusal a problem with a body, a request that was executed
// always answered as such even with garbage after it on the connection, and compression as the
// deployed API does it (minimumCompressionSize, gzip and deflate by Accept-Encoding).
import { connect } from 'node:net';
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { basicAuthorization } from '../support/api-client.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const editor = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
const port = () => Number(new URL(testEnvironment().url).port);
const event = JSON.stringify({ name: 'Edge', location: 'Hall', eventDescription: 'Raw socket', dates: ['2034-02-02'], price: 1 });

/** Sends the bytes, reads until the server closes the connection, and splits what came into responses. */
function exchange(request: string | Buffer): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port(), '127.0.0.1', () => socket.write(request));
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), 30_000);
    socket.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponses(data));
    });
  });
}

function parseResponses(data: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest: Buffer = data;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new Error(`Not a response: ${rest.toString('latin1').slice(0, 80)}`);
    const [statusLine = '', ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    rest = rest.subarray(headEnd + 4);
    let body: Buffer = Buffer.alloc(0);
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
        rest = rest.subarray(lineEnd + 2);
        if (!size) {
          rest = rest.subarray(2);
          break;
        }
        body = Buffer.concat([body, rest.subarray(0, size)]);
        rest = rest.subarray(size + 2);
      }
    } else if (headers['content-length'] === undefined) {
      body = rest; // delimited by the connection's close
      rest = Buffer.alloc(0);
    } else {
      const length = Number(headers['content-length']);
      body = rest.subarray(0, length);
      rest = rest.subarray(length);
    }
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
  return responses;
}

function expectProblem(response: RawResponse | undefined, status: number) {
  expect(response?.status).toBe(status);
  expect(response?.headers['content-type']).toBe('application/problem+json');
  /* eslint-disable @typescript-eslint/no-unsafe-assignment -- jest's asymmetric matchers are typed any */
  expect(JSON.parse(response?.body.toString('utf8') ?? '')).toEqual(
    expect.objectContaining({ status, title: expect.any(String), detail: expect.any(String) }),
  );
  /* eslint-enable @typescript-eslint/no-unsafe-assignment */
}

const post = (headers: string, body = event) =>
  `POST /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${editor}\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

async function eventExists(location: string): Promise<number> {
  return (await fetch(new URL(location, testEnvironment().url), { headers: { Authorization: editor } })).status;
}

describe('a request followed by garbage on the same connection', () => {
  test.each([
    ['one stray byte', 'X'],
    ['a method nobody implements', 'BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['a broken request line', 'GET /\r\n\r\n'],
  ])('%s: the executed POST gets its 201, then the garbage a problem, then the connection closes', async (_name, garbage) => {
    const [created, refused, ...more] = await exchange(post('') + garbage);
    expect(created?.status).toBe(201);
    expect(created?.headers.location).toMatch(/^\/v1\.1\/special-events\/[0-9a-f-]{36}$/);
    expect(refused?.status === 400 || refused?.status === 501).toBe(true);
    expectProblem(refused, refused?.status ?? 0);
    expect(more).toEqual([]);
    expect(await eventExists(created?.headers.location ?? '')).toBe(200);
  });
});

describe('requests a strict HTTP/1.1 server refuses before running anything', () => {
  test.each([
    ['no Host', 'GET /v1.1 HTTP/1.1\r\n\r\n', 400],
    ['two Host headers', 'GET /v1.1 HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: example.org\r\n\r\n', 400],
    ['a Host that is not a host', 'GET /v1.1 HTTP/1.1\r\nHost: a b@c\r\n\r\n', 400],
  ])('%s: a 400 problem, then the connection closes', async (_name, request, status) => {
    const [answer, ...more] = await exchange(request);
    expectProblem(answer, status);
    expect(more).toEqual([]);
  });

  test('an HTTP/1.0 request without Host is served (Host is required from HTTP/1.1 on)', async () => {
    const [answer] = await exchange('GET /v1.1 HTTP/1.0\r\n\r\n');
    expect(answer?.status).toBe(200);
  });

  test('Transfer-Encoding: gzip, chunked is a 501 (a transfer coding it does not implement), and no event is created', async () => {
    const chunked = `${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n0\r\n\r\n`;
    const request = `POST /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${editor}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${chunked}`;
    const before = await listCount();
    const [answer, ...more] = await exchange(request);
    expectProblem(answer, 501);
    expect(answer?.headers.connection).toBe('close');
    expect(more).toEqual([]);
    expect(await listCount()).toBe(before);
  });

  // The gateway decodes a gzip body (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-make-request-with-compressed-payload.html);
  // the handler, seeing the coding named, refuses it with Accept-Encoding: identity.
  test.each([
    ['gzip then identity on two lines', 'Content-Encoding: gzip\r\nContent-Encoding: identity\r\n'],
    ['identity then gzip on two lines', 'Content-Encoding: identity\r\nContent-Encoding: gzip\r\n'],
    ['identity, gzip on one line', 'Content-Encoding: identity, gzip\r\n'],
  ])('Content-Encoding %s on a gzip body: 415 with Accept-Encoding: identity, nothing created', async (_name, headers) => {
    const before = await listCount();
    const body = gzipSync(event);
    const head = `POST /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${editor}\r\nContent-Type: application/json\r\n${headers}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
    const [answer] = await exchange(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    expectProblem(answer, 415);
    expect(answer?.headers['accept-encoding']).toBe('identity');
    expect(await listCount()).toBe(before);
  });

  test('Content-Encoding br (a coding API Gateway does not decode): the gateway 415, nothing created', async () => {
    const before = await listCount();
    const [answer] = await exchange(post('Content-Encoding: br\r\nConnection: close\r\n'));
    expectProblem(answer, 415);
    expect(answer?.headers['accept-encoding']).toBe('identity');
    expect(await listCount()).toBe(before);
  });
});

async function listCount(): Promise<number> {
  const response = await fetch(`${testEnvironment().url}/special-events?startDate=2034-02-01&endDate=2034-02-03&limit=30`, {
    headers: { Authorization: editor },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as unknown[]).length;
}

describe('compression as deployed (from 1 KiB, gzip or deflate by Accept-Encoding)', () => {
  const get = (path: string, headers = '', method = 'GET') =>
    exchange(`${method} /v1.1${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`);

  test.each([
    ['gzip', 'gzip', gunzipSync],
    ['deflate, gzip;q=0.5', 'deflate', inflateSync],
    ['gzip;q=0.2, deflate;q=0.8', 'deflate', inflateSync],
    ['*', 'gzip', gunzipSync],
    ['br;q=1, gzip;q=0.1', 'gzip', gunzipSync],
  ] as const)('Accept-Encoding: %s -> %s, the same bytes once decoded', async (acceptEncoding, coding, decode) => {
    const [plain] = await get('/openapi.json');
    const [coded] = await get('/openapi.json', `Accept-Encoding: ${acceptEncoding}\r\n`);
    expect(plain?.status).toBe(200);
    expect(plain?.headers['content-encoding']).toBeUndefined();
    expect(plain?.headers.vary).toMatch(/accept-encoding/i);
    expect(coded?.headers['content-encoding']).toBe(coding);
    expect(coded?.headers.vary).toMatch(/accept-encoding/i);
    expect(coded?.body.length).toBeLessThan(plain?.body.length ?? 0);
    expect(decode(coded?.body ?? Buffer.alloc(0)).equals(plain?.body ?? Buffer.alloc(0))).toBe(true);
  });

  test.each(['identity', 'gzip;q=0, deflate;q=0', 'br', ''])('Accept-Encoding: %p -> not compressed', async (acceptEncoding) => {
    const [answer] = await get('/openapi.json', acceptEncoding ? `Accept-Encoding: ${acceptEncoding}\r\n` : '');
    expect(answer?.status).toBe(200);
    expect(answer?.headers['content-encoding']).toBeUndefined();
    expect((): unknown => JSON.parse(answer?.body.toString('utf8') ?? '')).not.toThrow();
  });

  test('an answer under 1 KiB, a HEAD and a 204 are never compressed', async () => {
    const [small] = await get('', 'Accept-Encoding: gzip\r\n');
    expect(small?.body.length).toBeLessThan(1024);
    expect(small?.headers['content-encoding']).toBeUndefined();
    const [head] = await get('/openapi.json', 'Accept-Encoding: gzip\r\n', 'HEAD');
    expect(head?.headers['content-encoding']).toBeUndefined();
    const [noContent] = await exchange(
      `OPTIONS /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n`,
    );
    expect(noContent?.status).toBe(204);
    expect(noContent?.headers['content-encoding']).toBeUndefined();
  });

  test("a handler's list answer over 1 KiB is compressed too, and decodes to its JSON", async () => {
    for (let i = 0; i < 8; i++) {
      const [created] = await exchange(
        post(
          'Connection: close\r\n',
          JSON.stringify({ name: `Long ${i}`, location: 'Hall', eventDescription: 'x'.repeat(200), dates: ['2034-03-03'], price: 1 }),
        ),
      );
      expect(created?.status).toBe(201);
    }
    const [list] = await get(
      '/special-events?startDate=2034-03-03&endDate=2034-03-03&limit=30',
      `Authorization: ${editor}\r\nAccept-Encoding: gzip\r\n`,
    );
    expect(list?.status).toBe(200);
    expect(list?.headers['content-encoding']).toBe('gzip');
    expect((JSON.parse(gunzipSync(list?.body ?? Buffer.alloc(0)).toString('utf8')) as unknown[]).length).toBeGreaterThanOrEqual(8);
  });
});
