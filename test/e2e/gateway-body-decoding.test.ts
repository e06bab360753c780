// A request body's Content-Encoding as API Gateway decodes it: before the authorizer ("the early
// phase of decompression before your API and stage are identified":
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-make-request-with-compressed-payload.html),
// bounded by the 10 MB payload limit once decoded (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html;
// AWS does not say whether the limit also applies after decoding: the local choice, in
// lib/local/request-body.ts). Measured from outside: the RSS of a local API process of its own.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { PAYLOAD_LIMIT_ANSWER } from '../../functions/http/gateway-responses.ts';
import { readDecodedBody } from '../../lib/local/request-body.ts';
import { basicAuthorization } from '../support/api-client.ts';
import { LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS } from '../support/test-environment.ts';

const MiB = 1024 * 1024;
/** What the local API may grow by while one such request is handled (the bound). */
const MAX_RSS_RISE_BYTES = 50 * MiB;

let local: OwnLocalApi | undefined;
/** 498 bytes that decode, `gzip, gzip`, to 200 MiB of zeros (made once: compressing it takes seconds on a busy machine). */
let bomb: Buffer;

beforeAll(async () => {
  // A process of its own, so that its memory is this test's requests' alone.
  local = await startOwnLocalApi('body-decoding');
  bomb = gzipSync(gzipSync(Buffer.alloc(200 * MiB)));
  // Warm up the path once (a refused bomb), so the baseline below holds what any first request loads.
  await post(bomb, { 'Content-Encoding': 'gzip, gzip' });
}, LOCAL_API_START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await local?.stop();
});

/** The resident set of the local API process, from /proc (Linux). */
function rss(): number {
  const status = readFileSync(`/proc/${local?.process.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
}

/** Runs `work` while sampling the API's RSS; returns its result and the highest rise over the RSS before it. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; rise: number }> {
  const before = rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 5);
  try {
    const result = await work();
    peak = Math.max(peak, rss());
    return { result, rise: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

async function post(body: Buffer, headers: Record<string, string>) {
  const response = await fetch(`${local?.url}/special-events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

const editor = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);

describe('a compressed body that decodes past the 10 MB limit', () => {
  test('a 498-byte `gzip, gzip` body without credentials that decodes to 200 MiB is refused 413, the API growing by less than 50 MB, and a concurrent request is answered', async () => {
    expect(bomb.length).toBeLessThan(600);
    const { result, rise } = await measured(() =>
      Promise.all([post(bomb, { 'Content-Encoding': 'gzip, gzip' }), fetch(local?.url ?? '').then((response) => response.status)]),
    );
    const [refused, concurrent] = result;
    // Decoded before the authorizer, as API Gateway does: the size, not the missing credentials, decides.
    expect([refused.status, refused.contentType, refused.body]).toEqual([
      413,
      PAYLOAD_LIMIT_ANSWER.headers['Content-Type'],
      PAYLOAD_LIMIT_ANSWER.body,
    ]);
    expect(concurrent).toBe(200);
    expect(rise).toBeLessThan(MAX_RSS_RISE_BYTES);
  });

  // Not a timing: the event loop turns while a bomb is decoded (zlib's streams work in the thread
  // pool), where a synchronous gunzip would hold it until the whole body was inflated.
  test('decoding never holds the event loop: other callbacks run while a bomb is decoded, and it stops at the limit', async () => {
    const request = Object.assign(Readable.from([bomb]), { rawHeaders: ['Content-Encoding', 'gzip, gzip'] }) as unknown as IncomingMessage;
    let turns = 0;
    let decoding = true;
    const turn = () => {
      turns++;
      if (decoding) setImmediate(turn);
    };
    setImmediate(turn);
    const refusal = new Error('too large');
    const outcome = readDecodedBody(request, 10 * MiB, {
      tooLarge: () => refusal,
      unsupported: () => new Error('unsupported'),
      malformed: () => new Error('malformed'),
    }).finally(() => (decoding = false));
    await expect(outcome).rejects.toBe(refusal);
    expect(turns).toBeGreaterThan(10);
  });

  test.each([50, 100])(
    'an authenticated gzip body that decodes to %i MiB is refused 413 at the limit, the API growing by less than 50 MB',
    async (mebibytes) => {
      const body = gzipSync(Buffer.alloc(mebibytes * MiB, ' '));
      const { result, rise } = await measured(() => post(body, { 'Content-Encoding': 'gzip', Authorization: editor }));
      expect([result.status, result.body]).toEqual([413, PAYLOAD_LIMIT_ANSWER.body]);
      expect(rise).toBeLessThan(MAX_RSS_RISE_BYTES);
    },
  );

  test('more codings than the local gateway decodes (five gzip) are refused 415 before the authorizer, without reading them', async () => {
    let body: Buffer = Buffer.from('{}');
    for (let i = 0; i < 5; i++) body = gzipSync(body);
    const refused = await post(body, { 'Content-Encoding': 'gzip, gzip, gzip, gzip, gzip' });
    expect(refused.status).toBe(415);
  });

  test('a body not so coded is refused 415 before the authorizer (no credentials: 415, not 401)', async () => {
    const refused = await post(Buffer.from('{"not":"gzip"}'), { 'Content-Encoding': 'gzip' });
    expect(refused.status).toBe(415);
  });

  test('a body that decodes to just under the limit reaches the authorizer (no credentials: 401)', async () => {
    const answer = await post(gzipSync(Buffer.alloc(9 * MiB, ' ')), { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(401);
  });
});

describe('a body over the 10 MB payload limit on the wire', () => {
  test('a declared Content-Length over 10 MB is refused 413 at once, with the text API Gateway sends, before the body arrives', async () => {
    const { port } = new URL(local?.url ?? '');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(
          `POST /v1.1/special-events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * MiB + 1}\r\n\r\n{`,
        ),
      );
      let data = '';
      socket.on('data', (chunk: Buffer) => {
        data += chunk.toString('latin1');
        if (data.includes(PAYLOAD_LIMIT_ANSWER.body)) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain(PAYLOAD_LIMIT_ANSWER.body);
  });
});
