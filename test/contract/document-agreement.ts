// The document and the server agree, in both directions, on data generated from the SERVED
// document's own schemas (GET /v1.1/openapi.json):
//  - a request body or query string that is valid against the document is accepted (2xx);
//  - a request the server rejects with 400 is invalid against the document, except for the
//    rules the document states in prose because JSON Schema cannot say them (the list's date
//    range: endDate not before startDate, at most 366 days after it).
// Values come from a small JSON-Schema-to-fast-check generator (the subset the document uses),
// mutated one field at a time for the second direction. Used by the fixed-seed slice in
// `npm run test:system` (document-agreement.test.ts) and the long run in `npm run fuzz`.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { addDays } from '../../functions/events/calendar-dates.ts';
import { closedBeforeAnswer, isWriteMethod, resendWaitMs } from '../../bench/support/resend-rule.ts';
import { basicAuthorization } from '../support/api-client.ts';
import { createValidator } from '../support/json-schema-validator.ts';
import { TEST_USERS } from '../support/test-environment.ts';
import { RESERVED_YEARS } from '../reliability/reserved-years.ts';

type Json = Record<string, any>; // walking a JSON document

const SCHEMAS_ID = 'https://museum.example/agreement/schemas';

/** Events this test creates are moved to a year no list test looks at, then deleted. */
const STORED_YEAR = String(RESERVED_YEARS.scratch);

export interface AgreementOptions {
  url: string;
  seed: number;
  /** Requests of each of the four kinds: valid bodies, mutated bodies, valid queries, mutated queries. */
  runsPerKind: number;
}

export interface AgreementReport {
  requests: number;
  accepted: number;
  rejected: number;
  disagreements: string[];
}

/** An arbitrary of the values valid against `schema` (the keywords the document uses; others throw). */
export function arbitraryFor(schema: Json, defs: Json): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return arbitraryFor(defs[schema.$ref.split('/').pop() as string], defs);
  switch (schema.type) {
    case 'object': {
      const properties = Object.fromEntries(
        Object.entries(schema.properties as Json).map(([name, child]) => [name, arbitraryFor(child as Json, defs)]),
      );
      const record = fc.record(properties, { requiredKeys: schema.required ?? [] });
      return schema.minProperties ? record.filter((value) => Object.keys(value).length >= schema.minProperties) : record;
    }
    case 'array':
      return fc.array(arbitraryFor(schema.items as Json, defs), {
        minLength: schema.minItems ?? 0,
        maxLength: schema.maxItems,
        size: 'small',
      });
    case 'number': {
      const [minimum, maximum] = [schema.minimum ?? -1e9, schema.maximum ?? 1e9];
      if (schema.multipleOf === undefined) return fc.double({ min: minimum, max: maximum, noNaN: true });
      if (schema.multipleOf !== 0.01) throw new Error(`no generator for numbers with multipleOf ${schema.multipleOf}`);
      // Whole cents divided by 100: the JSON numbers with at most two decimals.
      const cents = fc.integer({ min: Math.ceil(minimum * 100), max: Math.floor(maximum * 100) });
      return fc.oneof(
        cents.map((n) => n / 100),
        fc.constantFrom(minimum, maximum, 19.99, 0.07, 0.3),
      );
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
    case 'string': {
      const base: fc.Arbitrary<string> = schema.pattern ? fc.stringMatching(new RegExp(schema.pattern, 'u')) : fc.string();
      const length = (text: string) => Array.from(text).length;
      return base.filter((text) => length(text) >= (schema.minLength ?? 0) && length(text) <= (schema.maxLength ?? Infinity));
    }
  }
  throw new Error(`no generator for ${JSON.stringify(schema).slice(0, 100)}`);
}

/** Invalid-looking values for one field: wrong types, odd text, odd numbers and dates. */
const NASTY_UNITS = [
  '\u0000',
  '\u0007',
  '\u0085',
  '\u200b',
  '\u200d',
  '\u2060',
  '\u00ad',
  '\ufe0f',
  '\u200e',
  '\u202e',
  '\u2066',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\u2028',
  '\u3000',
  ' ',
  '\t',
  '\n',
  'a',
  '🦕',
  '\u{e0041}',
];
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...NASTY_UNITS), maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 195, max: 205 }).map((n) => '🦕'.repeat(n)),
  fc.double(),
  fc.integer({ min: -10_000, max: 200_000_000 }).map((n) => n / 1000),
  fc.constantFrom(1e-7, 0.030000000000000002, 1000000.01, -0.01, 1e21, 1.005),
  fc.constantFrom(
    `${STORED_YEAR}-02-30`,
    `${STORED_YEAR}-1-1`,
    '0299-01-01',
    '1899-12-31',
    '10000-01-01',
    `${STORED_YEAR}-13-01`,
    `${STORED_YEAR}-01-01T00:00:00Z`,
  ),
  fc.array(fc.constantFrom(`${STORED_YEAR}-02-30`, '0299-01-01', `${STORED_YEAR}-03-01`, '', 5), { maxLength: 4 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Dates of a body that could be stored move to STORED_YEAR (any month-day is valid there: it is a leap year). */
function toStoredYear(body: unknown): unknown {
  if (!body || typeof body !== 'object' || !Array.isArray((body as Json).dates)) return body;
  const dates = (body as Json).dates.map((date: unknown) =>
    typeof date === 'string' && /^\d{4}-/.test(date) ? `${STORED_YEAR}${date.slice(4)}` : date,
  );
  return { ...(body as Json), dates };
}

interface Probe {
  kind: 'valid-body' | 'mutated-body' | 'valid-query' | 'mutated-query';
  method: 'POST' | 'PATCH' | 'GET';
  body?: unknown;
  query?: Record<string, string>;
}

/** What the agreement resends with Retry-After: a 409 is an answer it checks. */
const AGREEMENT_RESENT_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * A request as the documented client sends it (docs/API.md): a 429 or 503 with Retry-After is
 * sent again after up to that wait, and a write, which carries an Idempotency-Key, also after a
 * 504 (a commit on a loaded machine can outlive its time limit); one whose connection closed
 * before any answer is sent again at once. Neither says anything of the schema.
 */
async function send(url: string, init: RequestInit = {}): Promise<Response> {
  const method = init.method ?? 'GET';
  const sent = isWriteMethod(method)
    ? { ...init, headers: { ...(init.headers as Record<string, string>), 'Idempotency-Key': randomUUID() } }
    : init;
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, sent);
    } catch (error) {
      if (!closedBeforeAnswer(error) || attempt >= 5) throw error;
      continue;
    }
    const wait = resendWaitMs(method, response, AGREEMENT_RESENT_STATUSES);
    if (wait === undefined || attempt >= 5) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

export async function runAgreement(options: AgreementOptions): Promise<AgreementReport> {
  const documentResponse = await fetch(`${options.url}/openapi.json`);
  const document = (await documentResponse.json()) as Json;
  const defs = document.components.schemas as Json;
  const ajv = createValidator({ strict: false });
  ajv.addSchema({ $id: SCHEMAS_ID, $defs: JSON.parse(JSON.stringify(defs).replaceAll('"#/components/schemas/', '"#/$defs/')) });
  const validatorOf = (name: string) => ajv.getSchema(`${SCHEMAS_ID}#/$defs/${name}`) as ValidateFunction;
  const requestSchema = (method: string, path: string) =>
    (document.paths[path][method].requestBody.content['application/json'].schema.$ref as string).split('/').pop() as string;
  const createName = requestSchema('post', '/special-events');
  const updateName = requestSchema('patch', '/special-events/{eventId}');
  // The query parameters (the list also takes If-None-Match, a header: not generated here).
  const listParameters = (document.paths['/special-events'].get.parameters as Json[])
    .map((parameter) =>
      typeof parameter.$ref === 'string' ? document.components.parameters[parameter.$ref.split('/').pop() as string] : parameter,
    )
    .filter((parameter) => parameter.in === 'query');
  const parameterValidators = Object.fromEntries(
    listParameters.map((parameter) => [
      parameter.name,
      ajv.compile(JSON.parse(JSON.stringify(parameter.schema).replaceAll('"#/components/schemas/', `"${SCHEMAS_ID}#/$defs/`))),
    ]),
  );

  const createBody = arbitraryFor(defs[createName], defs);
  const updateBody = arbitraryFor(defs[updateName], defs);
  const mutated = (valid: fc.Arbitrary<unknown>, fields: string[]) =>
    fc.oneof(
      fc.tuple(valid, fc.constantFrom(...fields), nastyValue).map(([body, field, value]) => ({ ...(body as Json), [field]: value })),
      fc
        .tuple(valid, fc.constantFrom(...fields))
        .map(([body, field]) => Object.fromEntries(Object.entries(body as Json).filter(([name]) => name !== field))),
      fc.tuple(valid, fc.constantFrom('eventId', 'extra', '', 'Name')).map(([body, field]) => ({ ...(body as Json), [field]: 'x' })),
    );
  const fields = Object.keys(defs[createName].properties);
  const queryValue = (name: string) => {
    const schema = listParameters.find((parameter) => parameter.name === name)!.schema as Json;
    return arbitraryFor(schema, defs).map(String);
  };
  const validQuery = fc
    .record(Object.fromEntries(listParameters.map((parameter) => [parameter.name, queryValue(parameter.name)])), { requiredKeys: [] })
    .chain((query: Partial<Record<string, string>>) =>
      // Half the time endDate follows startDate closely, so that the range rules in the description hold.
      query.startDate && query.endDate
        ? fc.oneof(
            fc.constant(query),
            fc.integer({ min: 0, max: 366 }).map((days) => ({ ...query, endDate: addDays(query.startDate!, days) })),
          )
        : fc.constant(query),
    ) as fc.Arbitrary<Record<string, string>>;
  const mutatedQuery = fc
    .tuple(
      validQuery,
      fc.constantFrom(...listParameters.map((parameter) => parameter.name as string)),
      fc.oneof(
        fc.constantFrom(
          '0',
          '01',
          '101',
          '31',
          '-1',
          '1.5',
          '1e1',
          '+1',
          '',
          ' 1',
          '1000000',
          '9'.repeat(30),
          'abc',
          '0299-01-01',
          '2031-02-30',
          '2031-2-1',
          '10000-01-01',
          '1900-01-01',
          '9999-12-31',
        ),
        fc.string({ maxLength: 6 }),
      ),
    )
    .map(([query, name, value]) => ({ ...query, [name]: value }));

  const probes = fc.sample(
    fc.oneof(
      fc.oneof(
        createBody.map((body): Probe => ({ kind: 'valid-body', method: 'POST', body })),
        updateBody.map((body): Probe => ({ kind: 'valid-body', method: 'PATCH', body })),
      ),
      fc.oneof(
        mutated(createBody, fields).map((body): Probe => ({ kind: 'mutated-body', method: 'POST', body })),
        mutated(updateBody, fields).map((body): Probe => ({ kind: 'mutated-body', method: 'PATCH', body })),
      ),
      validQuery.map((query): Probe => ({ kind: 'valid-query', method: 'GET', query })),
      mutatedQuery.map((query): Probe => ({ kind: 'mutated-query', method: 'GET', query })),
    ),
    { seed: options.seed, numRuns: options.runsPerKind * 4 },
  );

  const authorization = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
  const headers = { Authorization: authorization, 'Content-Type': 'application/json' };
  const target = (await (
    await send(`${options.url}/special-events`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'Agreement target',
        location: 'Lab',
        eventDescription: 'PATCHed by the agreement test',
        dates: [`${STORED_YEAR}-06-01`],
        price: 1,
      }),
    })
  ).json()) as { eventId: string };

  const report: AgreementReport = { requests: 0, accepted: 0, rejected: 0, disagreements: [] };
  for (const probe of probes) {
    let valid: boolean;
    let response: Response;
    let sent: string;
    if (probe.method === 'GET') {
      const query = probe.query ?? {};
      valid = Object.entries(query).every(([name, value]) => parameterValidators[name]!(/^-?[0-9]+$/.test(value) ? Number(value) : value));
      sent = new URLSearchParams(query).toString();
      response = await send(`${options.url}/special-events?${sent}`, { headers: { Authorization: authorization } });
    } else {
      const body = toStoredYear(probe.body);
      valid = validatorOf(probe.method === 'POST' ? createName : updateName)(body);
      sent = JSON.stringify(body);
      const path = probe.method === 'POST' ? '/special-events' : `/special-events/${target.eventId}`;
      response = await send(`${options.url}${path}`, { method: probe.method, headers, body: sent });
    }
    const text = await response.text();
    report.requests += 1;
    const where = `${probe.kind} ${probe.method} ${sent.slice(0, 300)} -> ${response.status} ${text.slice(0, 300)}`;
    if (response.ok) {
      report.accepted += 1;
      if (!valid) report.disagreements.push(`the server accepted what the document rejects: ${where}`);
      if (probe.method === 'POST')
        await send(`${options.url}/special-events/${(JSON.parse(text) as { eventId: string }).eventId}`, { method: 'DELETE', headers });
    } else if (response.status === 400) {
      report.rejected += 1;
      const errors = ((JSON.parse(text) as { errors?: { field: string; message: string }[] }).errors ?? []).filter(
        // The range rules, stated in the endDate description: JSON Schema cannot compare two parameters.
        (error) => !(error.field === 'endDate' && error.message.includes('startDate')),
      );
      if (valid && errors.length > 0) report.disagreements.push(`the document accepts what the server rejects: ${where}`);
    } else {
      report.disagreements.push(`neither 2xx nor 400: ${where}`);
    }
  }
  await fetch(`${options.url}/special-events/${target.eventId}`, { method: 'DELETE', headers });
  return report;
}
