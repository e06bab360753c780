// `npm run smoke [-- --read-only]`: black-box checks of a running API at any base URL, every
// answer checked against the committed OpenAPI document (test/support/contract.ts). The preview
// workflow runs it against the preview it just deployed (with a temporary editor), production
// read-only after each deploy, and `npm run test:system` against the local API (test/smoke/smoke.test.ts),
// so the checks cannot rot.
//   MUSEUM_API_URL        base URL, ending in /v1.1
//   MUSEUM_API_USERNAME   a user (an editor, unless --read-only; a viewer is enough then)
//   MUSEUM_API_PASSWORD   its password (from the environment, never an argument)
// Read-only: the unauthenticated documents, a refused request without credentials and, with a
// user, a list and a GET of an absent event. Otherwise also one event created, read, changed,
// listed and deleted (in a far-off year, deleted in any case). Exits 1 on the first failure.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { fetchChecked } from '../support/contract.ts';

const { values } = parseArgs({ options: { 'read-only': { type: 'boolean', default: false } } });
const readOnly = values['read-only'];
const baseUrl = (process.env.MUSEUM_API_URL ?? '').replace(/\/$/, '');
const username = process.env.MUSEUM_API_USERNAME;
const password = process.env.MUSEUM_API_PASSWORD;
/** How long a new event may take to show in a list: GSI propagation is usually well under a second. */
const INDEX_LAG_BOUND_MS = 10_000;
if (!/^https?:\/\/.+\/v1\.1$/.test(baseUrl)) {
  console.error('Set MUSEUM_API_URL to the base URL, ending in /v1.1');
  process.exit(2);
}
if (!readOnly && (!username || !password)) {
  console.error('Set MUSEUM_API_USERNAME and MUSEUM_API_PASSWORD (an editor), or pass --read-only');
  process.exit(2);
}
const authorization = username && password ? `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` : undefined;

let checks = 0;
async function check(name: string, run: () => Promise<void>): Promise<void> {
  await run();
  checks += 1;
  console.log(`ok ${checks} - ${name}`);
}

function expectStatus(response: { status: number; text: string }, status: number, what: string): void {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status}: ${response.text.slice(0, 300)}`);
}

const asUser = (init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), Authorization: authorization ?? '' },
});

async function main(): Promise<void> {
  await check('GET /v1.1 answers the service index without credentials', async () => {
    expectStatus(await fetchChecked(baseUrl, ''), 200, 'GET /v1.1');
  });
  await check('GET /v1.1/openapi.json answers the OpenAPI document', async () => {
    // The document itself is not an operation of the contract: checked by what it is.
    const response = await fetch(`${baseUrl}/openapi.json`);
    const text = await response.text();
    expectStatus({ status: response.status, text }, 200, 'GET /openapi.json');
    if (!String((JSON.parse(text) as { openapi?: unknown }).openapi).startsWith('3.')) throw new Error('not an OpenAPI 3 document');
  });
  await check('a request without credentials is refused with 401 and a challenge', async () => {
    const response = await fetchChecked(baseUrl, '/special-events');
    expectStatus(response, 401, 'GET /special-events without credentials');
    if (!response.headers.get('www-authenticate')?.startsWith('Basic')) throw new Error('no Basic challenge');
  });
  if (!authorization) return;
  await check('the list answers for the given user', async () => {
    expectStatus(await fetchChecked(baseUrl, '/special-events', asUser()), 200, 'GET /special-events');
  });
  await check('an absent event is a 404 problem', async () => {
    expectStatus(await fetchChecked(baseUrl, `/special-events/${randomUUID()}`, asUser()), 404, 'GET an absent event');
  });
  if (readOnly) return;

  // A year no museum plans for, random per run, so parallel runs never see each other's event.
  const date = `${2900 + Math.floor(Math.random() * 99)}-06-15`;
  let eventId: string | undefined;
  try {
    await check('an editor creates an event', async () => {
      const created = await fetchChecked(
        baseUrl,
        '/special-events',
        asUser({
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            name: `Smoke test ${randomUUID()}`,
            location: 'Nowhere',
            eventDescription: 'Created and deleted by npm run smoke',
            dates: [date],
            price: 1.5,
          }),
        }),
      );
      expectStatus(created, 201, 'POST /special-events');
      eventId = (created.json() as { eventId: string }).eventId;
    });
    const path = `/special-events/${eventId}`;
    let etag = '';
    await check('the event reads back with an ETag', async () => {
      const read = await fetchChecked(baseUrl, path, asUser());
      expectStatus(read, 200, `GET ${path}`);
      etag = read.headers.get('etag') ?? '';
    });
    await check('a conditional change applies', async () => {
      expectStatus(
        await fetchChecked(
          baseUrl,
          path,
          asUser({
            method: 'PATCH',
            headers: { 'Content-Type': 'application/json', 'If-Match': etag },
            body: JSON.stringify({ price: 2 }),
          }),
        ),
        200,
        `PATCH ${path}`,
      );
    });
    await check('the list of its date shows it once the index has caught up', async () => {
      // Global secondary indexes are eventually consistent: a new event may be missing from the
      // list for a moment (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
      // Polled for at most INDEX_LAG_BOUND_MS; listed at most once at every poll.
      const until = Date.now() + INDEX_LAG_BOUND_MS;
      for (let poll = 1; ; poll++) {
        const list = await fetchChecked(baseUrl, `/special-events?startDate=${date}&endDate=${date}&limit=30`, asUser());
        expectStatus(list, 200, 'GET /special-events');
        const found = (list.json() as { eventId: string }[]).filter((event) => event.eventId === eventId).length;
        if (found > 1) throw new Error(`the created event is listed ${found} times`);
        if (found === 1) break;
        if (Date.now() > until)
          throw new Error(`the created event is not listed ${INDEX_LAG_BOUND_MS} ms after its creation (${poll} lists)`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * poll, 2_000)));
      }
    });
  } finally {
    if (eventId) {
      const deleted = await fetchChecked(baseUrl, `/special-events/${eventId}`, asUser({ method: 'DELETE' }));
      expectStatus(deleted, 204, 'DELETE the smoke event');
      console.log(`ok ${++checks} - the event is deleted`);
    }
  }
}

try {
  await main();
  console.log(`${checks} checks passed against ${baseUrl}${readOnly ? ' (read-only)' : ''}`);
} catch (error) {
  console.error(`not ok - ${(error as Error).message}`);
  process.exitCode = 1;
}
