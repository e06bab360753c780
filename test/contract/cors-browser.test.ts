// A page on another origin calls the API from headless Chromium (Debian's chromium, driven by
// playwright-core), as a museum web site would: with the page's origin allowed, the browser lets
// it read every answer of the handlers and of the gateway's MOCK integrations (their problem
// bodies, the exposed headers ETag, Location, Allow, Link), but not a gateway response (401):
// with two allowed origins those carry no CORS header, exactly as the deployed configuration
// sends them; from an origin that is not allowed it reads nothing.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { LIMITS, MINIMUM_COMPRESSION_BYTES } from '../../functions/events/limits.ts';
import { basicAuthorization, privateYear, sampleEvent } from '../support/api-client.ts';
import { fetchChecked } from '../support/contract.ts';
import { LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS } from '../support/test-environment.ts';
import { launchChromium } from '../support/chromium.ts';

/** What the page could read of one answer (or the error fetch threw). */
interface Seen {
  status?: number;
  body?: string;
  headers?: Record<string, string | null>;
  error?: string;
}

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

let pageServer: Server;
let pageOrigin: string;
let api: OwnLocalApi;
let browser: Browser;

beforeAll(async () => {
  pageServer = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>A museum web site</title>');
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  api = await startOwnLocalApi('cors-browser', {
    MUSEUM_ADMIN_PASSWORD: TEST_USERS.editor.password,
    CORS_ALLOWED_ORIGINS: `https://other.example,${pageOrigin}`,
  });
  browser = await launchChromium();
}, LOCAL_API_START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await browser?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await api?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await new Promise((resolve) => pageServer?.close(resolve));
});

/** Runs `calls` with fetch() inside a page loaded from `origin`. */
async function fromPage(origin: string, calls: Call[]): Promise<Seen[]> {
  const page: Page = await browser.newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(
      async ({ base, calls }) => {
        const seen = [];
        for (const call of calls) {
          try {
            const response = await fetch(`${base}${call.path}`, {
              method: call.method,
              headers: call.headers,
              body: call.body,
              cache: 'no-store',
            });
            const names = ['content-type', 'etag', 'location', 'allow', 'link', 'retry-after', 'cache-control', 'vary'];
            seen.push({
              status: response.status,
              body: await response.text(),
              headers: Object.fromEntries(names.map((name) => [name, response.headers.get(name)])),
            });
          } catch (error) {
            seen.push({ error: String(error) });
          }
        }
        return seen;
      },
      { base: api.url, calls },
    );
  } finally {
    await page.close();
  }
}

const editor = { Authorization: basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password) };
const asJson = { ...editor, 'Content-Type': 'application/json' };
const problemType = (seen: Seen) => (JSON.parse(seen.body ?? '{}') as { type?: string }).type?.replace(/^.*\/problems\//, '');

describe('a page on an allowed origin, in Chromium', () => {
  test('reads every answer of the handlers and of the MOCK integrations, and the headers it needs; a gateway response (401) it cannot read, as deployed with two origins', async () => {
    const key = randomUUID();
    const event = { ...sampleEvent(), dates: [`${privateYear()}-05-03`] };
    const [created] = await fromPage(pageOrigin, [
      { method: 'POST', path: '/special-events', headers: { ...asJson, 'Idempotency-Key': key }, body: JSON.stringify(event) },
    ]);
    expect(created?.status).toBe(201);
    const eventPath = new URL(created?.headers?.location ?? '', 'http://x').pathname.replace(/^\/v1\.1/, '');
    expect(eventPath).toMatch(/^\/special-events\/[0-9a-f-]{36}$/);
    expect(created?.headers?.etag).toBe('"1"');

    const calls: [expected: number, kind: string | undefined, call: Call][] = [
      [200, undefined, { method: 'GET', path: eventPath, headers: editor }],
      [200, undefined, { method: 'GET', path: `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`, headers: editor }],
      [400, 'validation-error', { method: 'GET', path: '/special-events?page=0', headers: editor }],
      [400, 'malformed-json', { method: 'POST', path: '/special-events', headers: asJson, body: '{' }],
      // A gateway response (no handler ran): with two allowed origins it carries no CORS header,
      // as deployed (gatewayCorsHeaders), so the page sees a failed fetch, not the 401.
      [0, undefined, { method: 'GET', path: '/special-events' }],
      [404, 'not-found', { method: 'GET', path: `/special-events/${randomUUID()}`, headers: editor }],
      [404, 'not-found', { method: 'GET', path: '/tickets', headers: editor }],
      [405, 'method-not-allowed', { method: 'PUT', path: '/special-events', headers: asJson, body: '{}' }],
      [405, 'method-not-allowed', { method: 'DELETE', path: '/openapi.json' }],
      [412, 'precondition-failed', { method: 'PATCH', path: eventPath, headers: { ...asJson, 'If-Match': '"999"' }, body: '{"price":1}' }],
      [
        413,
        'payload-too-large',
        {
          method: 'POST',
          path: '/special-events',
          headers: asJson,
          body: JSON.stringify({ ...event, eventDescription: 'x'.repeat(LIMITS.maxBodyBytes) }),
        },
      ],
      [
        415,
        'unsupported-media-type',
        { method: 'POST', path: '/special-events', headers: { ...editor, 'Content-Type': 'text/plain' }, body: JSON.stringify(event) },
      ],
      [
        422,
        'idempotency-key-reused',
        {
          method: 'POST',
          path: '/special-events',
          headers: { ...asJson, 'Idempotency-Key': key },
          body: JSON.stringify({ ...event, price: 2 }),
        },
      ],
      [200, undefined, { method: 'GET', path: '' }],
      [200, undefined, { method: 'GET', path: '/openapi.json' }],
      [204, undefined, { method: 'DELETE', path: eventPath, headers: editor }],
    ];
    const seen = await fromPage(
      pageOrigin,
      calls.map(([, , call]) => call),
    );
    const summary = seen.map((answer, index) => ({
      call: `${calls[index]?.[2].method} ${calls[index]?.[2].path}`,
      status: answer.status ?? ((answer.error ?? '').includes('Failed to fetch') ? 0 : answer.error),
      kind: answer.status && answer.status >= 400 ? problemType(answer) : undefined,
    }));
    expect(summary).toEqual(calls.map(([status, kind, call]) => ({ call: `${call.method} ${call.path}`, status, kind })));
    // Exposed headers are readable: the event's ETag, the list's Link, Allow of a 405.
    expect(seen[0]?.headers?.etag).toBe('"1"');
    // CORS-safelisted: readable without exposing. One Vary value, CORS on or off (the contract's const).
    expect(seen[0]?.headers?.['cache-control']).toBe('private, no-cache');
    expect(seen[1]?.headers?.link).toContain('rel="first"');
    expect(seen[7]?.headers?.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(seen[8]?.headers?.allow).toBe('GET, HEAD, OPTIONS');
    // With CORS on, a GET still answers exactly what the contract says (Vary: one value, CORS or not,
    // plus Accept-Encoding when the body is large enough to be compressed: the list may hold events
    // that suites running beside this one created on the same day).
    const checked = await fetchChecked(api.url, calls[1]?.[2].path ?? '', { headers: { ...editor, Origin: pageOrigin } });
    const compressible = Buffer.byteLength(checked.text) >= MINIMUM_COMPRESSION_BYTES;
    expect([checked.status, checked.headers.get('vary'), checked.headers.get('access-control-allow-origin')]).toEqual([
      200,
      compressible ? 'Authorization, Origin, Accept, Accept-Encoding' : 'Authorization, Origin, Accept',
      pageOrigin,
    ]);
  }, 60_000);

  test('revalidates: If-None-Match with the ETag the page read is a 304, on an event, a list page and the document', async () => {
    // A year of its own, so no other test's event changes the list page between the two reads.
    const event = { ...sampleEvent(), dates: [`${privateYear()}-05-02`] };
    const [created] = await fromPage(pageOrigin, [
      { method: 'POST', path: '/special-events', headers: asJson, body: JSON.stringify(event) },
    ]);
    const eventPath = new URL(created?.headers?.location ?? '', 'http://x').pathname.replace(/^\/v1\.1/, '');
    const listPath = `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`;
    const first = await fromPage(pageOrigin, [
      { method: 'GET', path: eventPath, headers: editor },
      { method: 'GET', path: listPath, headers: editor },
      { method: 'GET', path: '/openapi.json' },
    ]);
    const again = await fromPage(pageOrigin, [
      { method: 'GET', path: eventPath, headers: { ...editor, 'If-None-Match': first[0]?.headers?.etag ?? '' } },
      { method: 'GET', path: listPath, headers: { ...editor, 'If-None-Match': first[1]?.headers?.etag ?? '' } },
      { method: 'GET', path: '/openapi.json', headers: { 'If-None-Match': first[2]?.headers?.etag ?? '' } },
      { method: 'HEAD', path: eventPath, headers: editor },
    ]);
    expect(again.map((answer) => [answer.status, answer.body])).toEqual([
      [304, ''],
      [304, ''],
      [304, ''],
      [200, ''],
    ]);
    expect(again.map((answer) => answer.headers?.etag)).toEqual([
      first[0]?.headers?.etag,
      first[1]?.headers?.etag,
      first[2]?.headers?.etag,
      first[0]?.headers?.etag,
    ]);
  }, 60_000);
});

test('a page on an origin that is not allowed can read no answer at all', async () => {
  const other = pageOrigin.replace('127.0.0.1', 'localhost');
  const seen = await fromPage(other, [
    { method: 'GET', path: '/special-events', headers: editor },
    { method: 'GET', path: '/special-events' },
    { method: 'GET', path: '' },
    { method: 'GET', path: '/tickets' },
    { method: 'DELETE', path: '/openapi.json' },
  ]);
  for (const answer of seen) expect(answer.error).toMatch(/Failed to fetch/);
}, 60_000);
