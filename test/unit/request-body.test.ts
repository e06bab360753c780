// The shared HTTP edge in-process: what a handler sees of a body as API Gateway delivers it,
// as text or base64-encoded bytes (isBase64Encoded), before any operation runs.
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { UpdateEventRequest } from '../../functions/events/event-schema.ts';
import { httpHandler, jsonRequestBody } from '../../functions/http/http.ts';
import { validate } from '../../functions/http/request-validation.ts';
import { lambdaContext } from '../../lib/local/lambda-context.ts';

const echo = httpHandler(async (event) => ({ statusCode: 200, headers: {}, body: JSON.stringify(event.body) }), jsonRequestBody());
/** The edge of PATCH: the body parsed, then validated with the schema the handler uses. */
const update = httpHandler(
  async (event) => ({ statusCode: 200, headers: {}, body: JSON.stringify(validate(UpdateEventRequest, event.body, 'request body')) }),
  jsonRequestBody(),
);

/** A header given as a list is sent as that many field lines (API Gateway: the last in `headers`, all in `multiValueHeaders`). */
async function post(
  body: string | Buffer,
  headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' },
  handler = echo,
): Promise<APIGatewayProxyResult> {
  const base64 = Buffer.isBuffer(body);
  const event = {
    httpMethod: 'POST',
    path: '/special-events',
    resource: '/special-events',
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.at(-1) : value])),
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value : [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    body: base64 ? body.toString('base64') : body,
    isBase64Encoded: base64,
    requestContext: {},
  } as unknown as APIGatewayProxyEvent;
  return await handler(event, lambdaContext('echo', 'handler'));
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

describe('Content-Type', () => {
  const problem = (result: APIGatewayProxyResult) => JSON.parse(result.body) as { detail: string; errors?: { field: string }[] };

  test('given twice, or with a parameter given twice, is a 400 naming Content-Type: the media type is undetermined', async () => {
    for (const contentType of [
      ['application/json', 'application/json'],
      ['application/json', 'text/plain'],
      ['application/json; charset=utf-8; charset=latin1'],
      ['application/json; charset=utf-8; charset=utf-8'],
      ['application/json; CHARSET=utf-8; charset="utf-8"'],
    ]) {
      const result = await post('{"name":"x"}', { 'Content-Type': contentType });
      expect([contentType, result.statusCode, result.headers?.['Content-Type'], problem(result).errors?.[0]?.field]).toEqual([
        contentType,
        400,
        'application/problem+json',
        'Content-Type',
      ]);
    }
  });

  test('a well-formed type that is not JSON in UTF-8 is a 415; JSON in UTF-8, however written, is accepted', async () => {
    for (const contentType of ['text/plain', 'application/json; charset=latin1', 'application/json, application/json', '']) {
      expect([contentType, (await post('{"name":"x"}', { 'Content-Type': contentType })).statusCode]).toEqual([contentType, 415]);
    }
    for (const contentType of [
      'application/json',
      'Application/JSON; Charset="UTF-8"',
      'application/json;',
      'application/merge-patch+json; charset=utf-8',
    ]) {
      expect([contentType, (await post('{"name":"x"}', { 'Content-Type': contentType })).statusCode]).toEqual([contentType, 200]);
    }
  });
});

describe('numbers are judged on the decimal text sent', () => {
  const errors = async (body: string) => {
    const result = await post(body, { 'Content-Type': 'application/json' }, update);
    return result.statusCode === 200 ? (JSON.parse(result.body) as unknown) : (JSON.parse(result.body) as { errors: unknown }).errors;
  };

  test.each([
    ['1e-400', 'must have at most 2 decimals'],
    ['10.000000000000000001', 'must have at most 2 decimals'],
    ['0.1000000000000000000000001', 'must have at most 2 decimals'],
    ['999999.999999999999999999', 'must have at most 2 decimals'],
    ['1000000.0000000000000001', 'must be at most 1000000'],
    ['1e400', 'must be at most 1000000'],
    ['-1e-400', 'must not be negative'],
    ['-1e400', 'must not be negative'],
  ])('a price of %s, which a double would round, is a 400: price %s', async (price, message) => {
    expect(await errors(`{"price": ${price}}`)).toEqual([{ field: 'price', message }]);
  });

  test.each([
    ['1e2', 100],
    ['100.000000000000000000000', 100],
    ['0.1e1', 1],
    ['1999E-2', 19.99],
    ['0.30', 0.3],
    ['1000000', 1_000_000],
    ['-0', 0],
  ])('a price of %s names a value with at most 2 decimals: accepted as %d', async (price, value) => {
    expect(await errors(`{"price": ${price}}`)).toEqual({ price: value });
  });

  test('a number no double holds is refused by what its field expects, wherever it is', async () => {
    expect(await errors('{"dates": [1e-400]}')).toEqual([{ field: 'dates.0', message: 'must be a string' }]);
    expect(await errors('{"name": 1e400}')).toEqual([{ field: 'name', message: 'must be a string' }]);
    expect(await errors('{"price": 1, "extra": 1e-400}')).toEqual([{ field: 'extra', message: 'is not a known field' }]);
    expect(await errors('1e-400')).toEqual([{ field: '', message: 'must be a JSON object' }]);
  });
});
