// The shared HTTP edge in-process: what a handler sees of a body as API Gateway delivers it,
// as text or base64-encoded bytes (isBase64Encoded), before any operation runs.
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { httpHandler, jsonRequestBody } from '../../functions/http/http.ts';
import { lambdaContext } from '../../lib/local/lambda-context.ts';

const echo = httpHandler(async (event) => ({ statusCode: 200, headers: {}, body: JSON.stringify(event.body) }), jsonRequestBody());

async function post(body: string | Buffer, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<APIGatewayProxyResult> {
  const base64 = Buffer.isBuffer(body);
  const event = {
    httpMethod: 'POST',
    path: '/special-events',
    resource: '/special-events',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    body: base64 ? body.toString('base64') : body,
    isBase64Encoded: base64,
    requestContext: {},
  } as unknown as APIGatewayProxyEvent;
  return await echo(event, lambdaContext('echo', 'handler'));
}

const detail = (result: APIGatewayProxyResult) => (JSON.parse(result.body) as { detail: string }).detail;

describe('request bodies', () => {
  test('a base64-encoded UTF-8 body is decoded and parsed', async () => {
    const result = await post(Buffer.from('{"name":"Café 🦕"}'));
    expect([result.statusCode, JSON.parse(result.body)]).toEqual([200, { name: 'Café 🦕' }]);
  });

  test.each([
    ['invalid bytes', [0x61, 0xff, 0xfe, 0x62]],
    ['an overlong NUL', [0xc0, 0x80]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])('a base64-encoded body with %s is a 400', async (_, bytes) => {
    const result = await post(Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]));
    expect([result.statusCode, detail(result)]).toEqual([400, 'The request body is not valid UTF-8']);
  });

  test('a text body holding U+FFFD (a gateway replaced bytes that were not UTF-8) is a 400, raw or base64', async () => {
    for (const body of ['{"name":"a\ufffd\ufffdb"}', Buffer.from('{"name":"a\ufffdb"}')]) {
      const result = await post(body);
      expect(result.statusCode).toBe(400);
      expect(detail(result)).toMatch(/U\+FFFD/);
    }
  });

  test('a content coding other than identity is a 415 that says Accept-Encoding: identity', async () => {
    for (const coding of ['gzip', 'br', 'deflate', 'GZIP', 'identity, gzip']) {
      const result = await post('{"name":"x"}', { 'Content-Type': 'application/json', 'Content-Encoding': coding });
      expect([coding, result.statusCode, result.headers?.['Accept-Encoding']]).toEqual([coding, 415, 'identity']);
    }
    expect((await post('{"name":"x"}', { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' })).statusCode).toBe(200);
  });

  test('a key given twice is a 400 naming it', async () => {
    const result = await post('{"price":1,"name":"x","price":2}');
    expect(result.statusCode).toBe(400);
    expect((JSON.parse(result.body) as { errors: unknown }).errors).toEqual([{ field: 'price', message: 'is given more than once' }]);
  });

  test('a BOM is malformed JSON, as before', async () => {
    expect((await post(Buffer.from('\ufeff{}'))).statusCode).toBe(400);
  });
});
