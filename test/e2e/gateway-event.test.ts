// What API Gateway passes to the authorizer and to the integration, as AWS documents it: the
// headers it adds and the query string parameters, held against AWS's own sample events
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html,
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html)
// and its notes on query strings (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
// The functions here only echo what they are given (written for this test), so the gateway's own
// event is what is asserted.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STAGE_TRACING_ENABLED } from '../../functions/deployment.ts';
import { startLocalApiGateway, type LocalApiGateway } from '../../lib/local/local-api-gateway.ts';

interface Event {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
}

let work: string;
let gateway: LocalApiGateway;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-gateway-event-'));
  await mkdir(join(work, 'authorizer'));
  await writeFile(
    join(work, 'authorizer', 'index.mjs'),
    `export async function handler(event) {
  return {
    principalId: 'echo',
    policyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: '*' }] },
    context: { event: JSON.stringify(event) },
  };
}
`,
  );
  await mkdir(join(work, 'list-special-events'));
  await writeFile(
    join(work, 'list-special-events', 'index.mjs'),
    `export async function handler(event) {
  return { statusCode: 200, body: JSON.stringify({ integration: event, authorizer: JSON.parse(event.requestContext.authorizer.event) }) };
}
`,
  );
  const unlimited = { rateLimit: 100_000, burstLimit: 100_000 };
  gateway = await startLocalApiGateway({
    functionsDirectory: work,
    accessLog: () => undefined,
    authorizerCacheTtlSeconds: 0,
    throttleLimits: unlimited,
  });
});

afterAll(async () => {
  await gateway.close();
  await rm(work, { recursive: true, force: true });
});

async function events(query: string, headers: Record<string, string> = {}): Promise<{ integration: Event; authorizer: Event }> {
  const response = await fetch(`${gateway.url}/special-events${query}`, { headers: { Authorization: 'Basic ZWNobzplY2hv', ...headers } });
  expect(response.status).toBe(200);
  return (await response.json()) as { integration: Event; authorizer: Event };
}

describe('the headers API Gateway adds', () => {
  test('X-Forwarded-For, X-Forwarded-Port, X-Forwarded-Proto and (tracing on) X-Amzn-Trace-Id reach the authorizer and the integration, in headers and multiValueHeaders', async () => {
    expect(STAGE_TRACING_ENABLED).toBe(true);
    const { port } = new URL(gateway.url);
    const seen = await events('');
    for (const event of [seen.integration, seen.authorizer]) {
      expect(event.headers).toMatchObject({ 'X-Forwarded-For': '127.0.0.1', 'X-Forwarded-Port': port, 'X-Forwarded-Proto': 'http' });
      // Root=1-{epoch seconds, 8 hex}-{96 bits, 24 hex} (https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader).
      expect(event.headers['X-Amzn-Trace-Id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
      for (const name of ['X-Forwarded-For', 'X-Forwarded-Port', 'X-Forwarded-Proto', 'X-Amzn-Trace-Id'])
        expect(event.multiValueHeaders[name]).toEqual([event.headers[name]]);
    }
    // One request, one trace: the authorizer and the integration see the same id.
    expect(seen.authorizer.headers['X-Amzn-Trace-Id']).toBe(seen.integration.headers['X-Amzn-Trace-Id']);
  });

  test("a client's X-Forwarded-For is kept with the address it came from appended; its X-Forwarded-Proto/Port are the gateway's; its trace id continues", async () => {
    const trace = 'Root=1-5f2330a4-6a0de1cd0e17c0508d386a64';
    const { integration } = await events('', {
      'X-Forwarded-For': '203.0.113.9',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Port': '443',
      'X-Amzn-Trace-Id': trace,
    });
    expect(integration.headers).toMatchObject({
      'X-Forwarded-For': '203.0.113.9, 127.0.0.1',
      'X-Forwarded-Proto': 'http',
      'X-Amzn-Trace-Id': trace,
    });
    expect(integration.multiValueHeaders['X-Forwarded-Proto']).toEqual(['http']);
  });
});

describe('query string parameters', () => {
  test('the REQUEST authorizer gets the query string parameters, single and multi-value, as the integration does; none is null', async () => {
    const seen = await events('?limit=5&limit=6&cursor=abc');
    for (const event of [seen.integration, seen.authorizer]) {
      expect(event.queryStringParameters).toEqual({ limit: '6', cursor: 'abc' });
      expect(event.multiValueQueryStringParameters).toEqual({ limit: ['5', '6'], cursor: ['abc'] });
    }
    const none = await events('');
    for (const event of [none.integration, none.authorizer]) {
      expect([event.queryStringParameters, event.multiValueQueryStringParameters]).toEqual([null, null]);
    }
  });

  test('a raw `;` splits the query as `&` does ("results in the data being split"); `%3B` is a semicolon in a value', async () => {
    const { integration, authorizer } = await events('?limit=5;cursor=abc&note=X%3BY');
    for (const event of [integration, authorizer]) {
      expect(event.queryStringParameters).toEqual({ limit: '5', cursor: 'abc', note: 'X;Y' });
      expect(event.multiValueQueryStringParameters).toEqual({ limit: ['5'], cursor: ['abc'], note: ['X;Y'] });
    }
  });
});
