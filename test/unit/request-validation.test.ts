// The edge validation: schemas, the list query's defaults and the HTTP Basic parser.
import { parseBasicCredentials } from '../../functions/auth/basic-auth.ts';
import { CreateEventRequest, UpdateEventRequest } from '../../functions/events/event-schema.ts';
import { validate } from '../../functions/http/request-validation.ts';
import { parseJsonText } from '../../functions/http/json-text.ts';
import { HttpProblem } from '../../functions/events/problems.ts';
import { problemOf } from '../support/problem-of.ts';
import { parseListQuery } from '../../functions/list-special-events.ts';

const valid = { name: ' Gala ', location: 'Hall', eventDescription: 'Line one\nLine two', dates: ['2031-02-02', '2031-02-01'], price: 0.5 };

describe('event schemas', () => {
  test('normalise a valid event: trimmed text, sorted dates', () => {
    expect(validate(CreateEventRequest, valid, 'request body')).toEqual({ ...valid, name: 'Gala', dates: ['2031-02-01', '2031-02-02'] });
  });

  test('list every failing field in one 400 problem', () => {
    const problem = problemOf(() => validate(CreateEventRequest, { ...valid, price: Number.NaN, dates: ['x'], extra: 1 }, 'request body'));
    expect(problem.problem.status).toBe(400);
    expect(problem.problem.errors?.map((e) => e.field).sort()).toEqual(['dates.0', 'extra', 'price']);
  });

  test('reject lone surrogates, which DynamoDB cannot store', () => {
    expect(() => validate(CreateEventRequest, { ...valid, name: 'bad \ud800' }, 'request body')).toThrow(HttpProblem);
  });

  test('a price is judged on its decimal text: a double by its shortest round-trip text, a body number by the digits sent', () => {
    const priceErrors = (body: unknown) => {
      try {
        validate(UpdateEventRequest, body, 'request body');
        return [];
      } catch (error) {
        return (error as HttpProblem).problem.errors?.map((e) => e.message) ?? [];
      }
    };
    expect(priceErrors({ price: 0.1 + 0.2 })).toEqual(['must have at most 2 decimals']);
    expect(priceErrors({ price: 1e-323 })).toEqual(['must have at most 2 decimals']);
    expect(priceErrors({ price: 19.99 })).toEqual([]);
    expect(priceErrors({ price: 1e6 })).toEqual([]);
    expect(priceErrors(parseJsonText('{"price": 19.990000000000000000001}'))).toEqual(['must have at most 2 decimals']);
    expect(priceErrors(parseJsonText('{"price": 19.99000000000000000000}'))).toEqual([]);
  });

  test('an update needs at least one field and accepts any subset', () => {
    expect(() => validate(UpdateEventRequest, {}, 'request body')).toThrow(HttpProblem);
    expect(validate(UpdateEventRequest, { price: 3 }, 'request body')).toEqual({ price: 3 });
  });
});

describe('list query', () => {
  const now = new Date('2026-11-21T23:30:00Z');
  const parse = (query: Record<string, string>) =>
    parseListQuery({ queryStringParameters: query, multiValueQueryStringParameters: null }, now);

  test('defaults to today (museum time zone), seven days, page 1, limit 10', () => {
    expect(parse({})).toEqual({ startDate: '2026-11-21', endDate: '2026-11-28', page: 1, limit: 10 });
  });

  test('reads MUSEUM_TIME_ZONE for today', async () => {
    const { museumTimeZone } = await import('../../functions/config.ts');
    expect(museumTimeZone()).toBe(process.env.MUSEUM_TIME_ZONE || 'UTC');
  });

  test('converts page and limit to numbers', () => {
    expect(parse({ startDate: '2026-01-01', endDate: '2026-01-01', page: '3', limit: '30' })).toEqual({
      startDate: '2026-01-01',
      endDate: '2026-01-01',
      page: 3,
      limit: 30,
    });
  });
});

describe('HTTP Basic credentials', () => {
  const encode = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

  test('split at the first colon: the password may contain colons', () => {
    expect(parseBasicCredentials(encode('admin:pa:ss:word'))).toEqual({ username: 'admin', password: 'pa:ss:word' });
  });

  test('accept a case-insensitive scheme and UTF-8 passwords', () => {
    expect(parseBasicCredentials(`basic ${Buffer.from('admin:mot-de-passe-é').toString('base64')}`)).toEqual({
      username: 'admin',
      password: 'mot-de-passe-é',
    });
  });

  test.each([
    undefined,
    '',
    'Basic',
    'Bearer token',
    encode('no-colon'),
    encode(':password'),
    encode('admin:'),
    encode('user name:password'),
    'Basic YWRtaW46cGFzc3dvcmQ', // missing padding
    'Basic YWRtaW46cGFzc3dvcmQ=!',
    `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`, // not UTF-8
  ])('reject %j', (header) => {
    expect(parseBasicCredentials(header)).toBeUndefined();
  });
});
