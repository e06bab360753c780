// The edge rules, one class at a time: If-Match (RFC 9110), text that looks empty or
// hides bidirectional controls, bodies that are not UTF-8, duplicate keys, and the end of the calendar.
import { LIMITS } from '../../functions/events/limits.ts';
import fc from 'fast-check';
import { addDays, daysBetween, FIRST_DATE, isCalendarDate, LAST_DATE } from '../../functions/events/calendar-dates.ts';
import { CreateEventRequest, EventPrice, ListEventsQuery } from '../../functions/events/event-schema.ts';
import { validate } from '../../functions/http/request-validation.ts';
import { decodeUtf8, duplicateKey, parseJsonText } from '../../functions/http/json-text.ts';
import { compareDecimal, decimalPlaces, JsonNumberText, sameDecimal } from '../../functions/events/decimal-text.ts';
import {
  IF_MATCH_PATTERN,
  IfNoneMatchFailedError,
  parseEntityTagList,
  readOutcome,
  versionOfTag,
  withPreconditions,
  type Preconditions,
} from '../../functions/http/preconditions.ts';
import { EventVersionMismatchError } from '../../functions/store/store-errors.ts';
import * as v from 'valibot';
import { HttpProblem } from '../../functions/events/problems.ts';
import { problemOf } from '../support/problem-of.ts';
import { codePointLength, MULTI_LINE_TEXT, obeysTextRule, SINGLE_LINE_TEXT } from '../../functions/events/text-rules.ts';
import { parseListQuery } from '../../functions/list-special-events.ts';
import { textRulePattern } from '../../lib/openapi/text-patterns.ts';
import { decidedByServerOnly } from '../support/text-pattern-gaps.ts';
import { preconditions } from '../../functions/http/request-headers.ts';

/** If-Match as the write handlers read it (request-headers.ts): the versions it names, or `invalid` for its 400. */
function parseIfMatch(lines: string[] | undefined): ReturnType<typeof preconditions>['ifMatch'] | { kind: 'invalid' } {
  try {
    return preconditions({ headers: {}, multiValueHeaders: lines === undefined ? {} : { 'if-match': lines } }).ifMatch;
  } catch (error) {
    if (error instanceof HttpProblem && error.problem.status === 400) return { kind: 'invalid' };
    throw error;
  }
}

const valid = { name: 'Gala', location: 'Hall', eventDescription: 'Line one\nLine two', dates: ['2031-02-01'], price: 0.5 };

describe('If-Match (RFC 9110 §13.1.1)', () => {
  test.each<[string[] | undefined, ReturnType<typeof parseIfMatch>]>([
    [undefined, { kind: 'absent' }],
    [['*'], { kind: 'any' }],
    [[' * '], { kind: 'any' }],
    [[''], { kind: 'versions', versions: [] }],
    [[','], { kind: 'versions', versions: [] }],
    [['"1"'], { kind: 'versions', versions: [1] }],
    [['"2", "1"'], { kind: 'versions', versions: [2, 1] }],
    [['"2",,"1"'], { kind: 'versions', versions: [2, 1] }],
    [['"2"', '"1"'], { kind: 'versions', versions: [2, 1] }],
    [['"01"'], { kind: 'versions', versions: [] }],
    [['"0000001"'], { kind: 'versions', versions: [] }],
    [['"1.0"'], { kind: 'versions', versions: [] }],
    [['W/"1"'], { kind: 'versions', versions: [] }],
    [['W/"1", "x,y"'], { kind: 'versions', versions: [] }],
    [['"x,y"'], { kind: 'versions', versions: [] }],
    [['"x,y", "3"'], { kind: 'versions', versions: [3] }],
    [['""'], { kind: 'versions', versions: [] }],
    [['"99999999999999999999"'], { kind: 'versions', versions: [] }],
    [['1'], { kind: 'invalid' }],
    [['garbage'], { kind: 'invalid' }],
    [['*, "1"'], { kind: 'invalid' }],
    [['"1" "2"'], { kind: 'invalid' }],
    [['"a"b"'], { kind: 'invalid' }],
    [['W/'], { kind: 'invalid' }],
    [['w/"1"'], { kind: 'invalid' }],
    [['"1'], { kind: 'invalid' }],
  ])('%j is %j', (lines, expected) => {
    expect(parseIfMatch(lines)).toEqual(expected);
  });

  test('strong comparison is exact string equality: only our canonical version tags can equal an ETag', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.string({ unit: fc.constantFrom('0', '1', '2', 'a', ',', '#', 'W'), maxLength: 6 }),
        (version, noise) => {
          const opaque = `${noise}${version}`;
          const parsed = parseIfMatch([`"${opaque}"`]);
          // The ETag of version `version` is `"<version>"`: it matches exactly when the opaque-tags are equal strings.
          expect(parsed.kind === 'versions' && parsed.versions.includes(version)).toBe(opaque === String(version));
        },
      ),
    );
  });

  test('the published pattern accepts exactly the values the parser accepts', () => {
    const pattern = new RegExp(IF_MATCH_PATTERN);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('"', 'W', '/', ',', ' ', '\t', '1', 'x', '*', '\u00a0'), maxLength: 14 }), (value) => {
        expect(parseIfMatch([value]).kind === 'invalid').toBe(!pattern.test(value.replace(/^[ \t]+|[ \t]+$/g, '')));
      }),
      { numRuns: 3000 },
    );
  });

  test('a long run of commas and spaces is parsed in linear time (no catastrophic backtracking), by the parser and the pattern', () => {
    // Each of these took hours with the earlier pattern `(E)?(OWS , OWS (E)?)*`; here the test simply finishes.
    for (const value of [`${', '.repeat(4000)}x`, `"1"${' ,'.repeat(4000)} x`, `${'"1",'.repeat(2000)}"`]) {
      expect(parseIfMatch([value]).kind).toBe('invalid');
      expect(new RegExp(IF_MATCH_PATTERN).test(value)).toBe(false);
    }
  });

  test('a list naming several versions writes with the current one when it is listed, and with none otherwise', async () => {
    const writes: (number | undefined)[] = [];
    const write = async (expected: number | undefined) => {
      writes.push(expected);
      return 'ok';
    };
    const absent = { kind: 'absent' } as const;
    await withPreconditions({ ifMatch: { kind: 'versions', versions: [2, 1] }, ifNoneMatch: absent }, async () => 1, write);
    await withPreconditions({ ifMatch: { kind: 'versions', versions: [2, 3] }, ifNoneMatch: absent }, async () => 1, write);
    await withPreconditions({ ifMatch: { kind: 'versions', versions: [] }, ifNoneMatch: absent }, async () => 1, write);
    await withPreconditions({ ifMatch: { kind: 'any' }, ifNoneMatch: absent }, async () => 1, write);
    expect(writes).toEqual([1, -1, -1, undefined]);
  });
});

describe('entity-tags beyond safe integers', () => {
  test('a tag is one of our versions only when its text is a safe integer written canonically: no float rounding makes two tags equal', () => {
    expect(versionOfTag('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    for (const tag of ['9007199254740992', '9007199254740993', '18014398509481984', '99999999999999999999', '1e3', '0x10'])
      expect([tag, versionOfTag(tag)]).toEqual([tag, undefined]);
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 2n ** 64n }), (n) => {
        const version = versionOfTag(String(n));
        // Either exactly the integer the text names, or no version at all.
        expect(version === undefined ? n > BigInt(Number.MAX_SAFE_INTEGER) : BigInt(version) === n).toBe(true);
      }),
    );
  });

  test('If-None-Match compares the tag text exactly: "9007199254740993" does not match "9007199254740992"', () => {
    const conditions = { ifMatch: { kind: 'absent' }, ifNoneMatch: parseEntityTagList(['"9007199254740993"']) } as const;
    expect(readOutcome(conditions as never, '"9007199254740992"')).toBe('proceed');
    expect(
      readOutcome({ ifMatch: parseEntityTagList(['"9007199254740993"']), ifNoneMatch: { kind: 'absent' } } as never, '"9007199254740992"'),
    ).toBe('precondition-failed');
  });
});

describe('preconditions by RFC 9110 §13.2.2, on every method', () => {
  const lists = (ifMatch?: string, ifNoneMatch?: string) => ({
    ifMatch: parseEntityTagList(ifMatch === undefined ? undefined : [ifMatch]),
    ifNoneMatch: parseEntityTagList(ifNoneMatch === undefined ? undefined : [ifNoneMatch]),
  });

  test.each<[string | undefined, string | undefined, ReturnType<typeof readOutcome>]>([
    [undefined, undefined, 'proceed'],
    ['*', undefined, 'proceed'],
    ['"3"', undefined, 'proceed'],
    ['"2", "3"', undefined, 'proceed'],
    ['"2"', undefined, 'precondition-failed'],
    ['W/"3"', undefined, 'precondition-failed'],
    ['', undefined, 'precondition-failed'],
    [undefined, '"3"', 'not-modified'],
    [undefined, 'W/"3"', 'not-modified'],
    [undefined, '*', 'not-modified'],
    [undefined, '"2"', 'proceed'],
    // If-Match first: when it fails, If-None-Match is not looked at.
    ['"2"', '"3"', 'precondition-failed'],
    ['"3"', '"3"', 'not-modified'],
    ['"3"', '"2"', 'proceed'],
  ])(
    'a GET of a representation tagged "3" with If-Match %j and If-None-Match %j (undefined: not sent): %s',
    (ifMatch, ifNoneMatch, outcome) => {
      expect(readOutcome(lists(ifMatch, ifNoneMatch) as never, '"3"')).toBe(outcome);
    },
  );

  /** What a write does under `conditions` when the current version is 3: the version it is conditioned on, or the error. */
  async function writeUnder(conditions: Preconditions, current: number | undefined = 3): Promise<number | undefined | string> {
    try {
      return await withPreconditions(
        conditions,
        async () => current,
        async (expected) => {
          // The store: a version that is not the current one is a 412, as DynamoDB's condition makes it.
          if (expected !== undefined && expected !== current) throw new EventVersionMismatchError('e', current);
          return expected;
        },
      );
    } catch (error) {
      return (error as Error).name;
    }
  }
  const absent = { kind: 'absent' } as const;

  test.each<[string, Preconditions, number | undefined | string]>([
    ['If-None-Match: * (the event exists)', { ifMatch: { kind: 'absent' }, ifNoneMatch: { kind: 'any' } }, IfNoneMatchFailedError.name],
    [
      'If-None-Match naming the current version',
      { ifMatch: absent, ifNoneMatch: parseEntityTagList(['"1", W/"3"']) as never },
      'IfNoneMatchFailedError',
    ],
    ['If-None-Match naming other versions only', { ifMatch: absent, ifNoneMatch: parseEntityTagList(['"1", "2"']) as never }, 3],
    [
      'If-Match and If-None-Match both holding',
      { ifMatch: { kind: 'versions', versions: [3] }, ifNoneMatch: parseEntityTagList(['"2"']) as never },
      3,
    ],
    [
      'If-Match failing, If-None-Match holding (If-Match first)',
      { ifMatch: { kind: 'versions', versions: [2] }, ifNoneMatch: parseEntityTagList(['"2"']) as never },
      'EventVersionMismatchError',
    ],
    ['If-Match holding, If-None-Match failing', { ifMatch: { kind: 'any' }, ifNoneMatch: { kind: 'any' } }, 'IfNoneMatchFailedError'],
    ['no preconditions', { ifMatch: absent, ifNoneMatch: absent }, undefined],
  ])('a write with %s', async (_, conditions, expected) => {
    expect(await writeUnder(conditions)).toEqual(expected);
  });
});

describe('numbers by their decimal text', () => {
  test('the same decimal whatever the notation', () => {
    for (const [a, b] of [
      ['1e2', '100'],
      ['100.000', '1E+2'],
      ['0.5', '5e-1'],
      ['-0', '0'],
      ['0.30', '0.3'],
    ] as const)
      expect([a, b, sameDecimal(a, b)]).toEqual([a, b, true]);
    for (const [a, b] of [
      ['1e-400', '0'],
      ['10.000000000000000001', '10'],
      ['1e400', 'Infinity'],
      ['-1', '1'],
    ] as const)
      expect([a, b, sameDecimal(a, b)]).toEqual([a, b, false]);
    expect([decimalPlaces('1.50'), decimalPlaces('1e-400'), decimalPlaces('1e3'), decimalPlaces('12.5e-1')]).toEqual([1, 400, 0, 2]);
    expect([
      compareDecimal('1000000.0000000000000001', 1e6),
      compareDecimal('999999.99', 1e6),
      compareDecimal('1e6', 1e6),
      compareDecimal('-1e-400', 0),
    ]).toEqual([1, -1, 0, -1]);
  });

  test('the runtime gives a JSON.parse reviver the source text of each number (ECMAScript source text access, Node 21 and later)', () => {
    expect(parseJsonText('{"price": 1e-400}')).toEqual({ price: new JsonNumberText('1e-400', 0) });
  });

  test('every price of whole cents up to the maximum, in any notation, is held exactly and accepted as sent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: LIMITS.maxPrice * 100 }), fc.nat({ max: 30 }), (cents, zeros) => {
        const text = cents === 0 ? `0.${'0'.repeat(zeros + 1)}e${zeros}` : `${cents}${'0'.repeat(zeros)}e${-2 - zeros}`;
        const body = parseJsonText(`{"price": ${text}}`) as { price: unknown };
        expect([text, v.safeParse(EventPrice, body.price).output]).toEqual([text, cents / 100]);
      }),
    );
  });

  test('a price text with a third decimal digit that is not zero is refused, however many digits it has', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: LIMITS.maxPrice * 100 - 1 }), fc.stringMatching(/^[0-9]{0,30}[1-9]$/), (cents, tail) => {
        const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}${tail}`;
        const body = parseJsonText(`{"price": ${text}}`) as { price: unknown };
        expect([text, v.safeParse(EventPrice, body.price).success]).toEqual([text, false]);
      }),
    );
  });
});

describe('text fields', () => {
  const nameOf = (name: string) => validate(CreateEventRequest, { ...valid, name }, 'request body').name;
  const messageFor = (field: 'name' | 'location' | 'eventDescription', value: string) =>
    problemOf(() => validate(CreateEventRequest, { ...valid, [field]: value }, 'request body')).problem.errors?.[0]?.message;

  test.each([
    '\u200b',
    '\u200d',
    '\ufeff',
    '\u200b\u200d\ufeff',
    ' \u200b ',
    '\u2060',
    '\u00ad',
    '\u034f',
    '\ufe0f',
    '\u{e0041}\u{e0042}',
    '\u3164',
    '\u180e',
    '\u{1d173}',
  ])('%j is empty in every text field', (text) => {
    for (const field of ['name', 'location', 'eventDescription'] as const)
      expect(messageFor(field, text)).toBe('must contain at least one visible character');
  });

  test.each(['\u202e', '\u202a', '\u202b', '\u202c', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'])(
    'bidirectional control %j is refused in every text field',
    (control) => {
      for (const field of ['name', 'location', 'eventDescription'] as const)
        expect(messageFor(field, `Gala ${control}night`)).toMatch(/bidirectional/);
    },
  );

  test('U+FFFD, control characters and lone surrogates are refused; line breaks only in descriptions', () => {
    expect(messageFor('name', 'a\ufffdb')).toMatch(/U\+FFFD/);
    expect(messageFor('name', 'a\u0007b')).toMatch(/control/);
    expect(messageFor('name', 'a\nb')).toMatch(/control characters or line breaks/);
    expect(messageFor('location', 'a\u2028b')).toMatch(/line breaks/);
    expect(messageFor('name', 'a\ud800')).toMatch(/well-formed/);
    expect(validate(CreateEventRequest, { ...valid, eventDescription: 'a\r\n\tb\u2028c' }, 'request body').eventDescription).toBe(
      'a\r\n\tb\u2028c',
    );
  });

  test('invisible characters between visible ones stay (a ZWJ inside an emoji sequence)', () => {
    expect(nameOf('👨\u200d👩\u200d👧 family day')).toBe('👨\u200d👩\u200d👧 family day');
    expect(nameOf('\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}')).toHaveLength(14); // the flag of England: tags
  });

  test('lengths count code points after trimming, as JSON Schema counts them', () => {
    expect(nameOf(` ${'🦕'.repeat(200)} `)).toBe('🦕'.repeat(200));
    expect(messageFor('name', '🦕'.repeat(201))).toBe('must be at most 200 characters');
  });

  test('the published pattern is the rule: the server accepts exactly the text it matches (before trimming and length)', () => {
    const unit = fc.oneof(
      fc.constantFrom(
        ' ',
        '\t',
        '\n',
        '\u200b',
        '\u200d',
        '\u202e',
        '\u2066',
        '\ufffd',
        '\ud800',
        '\u0085',
        '\u2028',
        '\ufeff',
        '\u{e0020}',
        'a',
        'é',
        '🦕',
      ),
      fc.string({ unit: 'binary', maxLength: 1 }),
    );
    fc.assert(
      fc.property(
        fc.array(unit, { maxLength: 8 }).map((units) => units.join('')),
        (text) => {
          for (const [rule, field] of [
            [SINGLE_LINE_TEXT, 'name'],
            [MULTI_LINE_TEXT, 'eventDescription'],
          ] as const) {
            const accepted = v_accepts(field, text);
            // Where the pattern cannot say the rule portably, it is looser and the server refuses alone.
            const expected = decidedByServerOnly(text) ? false : new RegExp(textRulePattern(rule), 'u').test(text);
            expect([field, text, accepted]).toEqual([field, text, expected]);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
  function v_accepts(field: string, text: string): boolean {
    try {
      validate(CreateEventRequest, { ...valid, [field]: text }, 'request body');
      return true;
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error;
      return false;
    }
  }

  test('the published pattern agrees with the rule on every single code point, alone and after a visible one (but where the server decides alone)', () => {
    for (const rule of [SINGLE_LINE_TEXT, MULTI_LINE_TEXT]) {
      const pattern = new RegExp(textRulePattern(rule), 'u');
      for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
        const character = String.fromCodePoint(codePoint);
        if (decidedByServerOnly(character)) {
          if (obeysTextRule(rule, character)) throw new Error(`U+${codePoint.toString(16)}: the server accepts what it alone decides`);
          continue;
        }
        if (
          pattern.test(character) !== obeysTextRule(rule, character) ||
          pattern.test(`a${character}`) !== obeysTextRule(rule, `a${character}`)
        ) {
          throw new Error(`U+${codePoint.toString(16)}: the pattern and the rule disagree`);
        }
      }
    }
  });

  test('codePointLength counts an astral character once', () => {
    expect(codePointLength('a🦕b')).toBe(3);
  });
});

describe('request body text', () => {
  test.each([
    ['a\\xff\\xfeb', [0x61, 0xff, 0xfe, 0x62]],
    ['overlong NUL', [0xc0, 0x80]],
    ['overlong slash', [0xe0, 0x80, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['a lone continuation byte', [0x80]],
  ])('%s is not UTF-8', (_, bytes) => {
    expect(decodeUtf8(Uint8Array.from(bytes))).toBeUndefined();
  });

  test('valid UTF-8 decodes as it is, a BOM included (JSON.parse then refuses it)', () => {
    expect(decodeUtf8(Buffer.from('\ufeff{"a":"é🦕"}'))).toBe('\ufeff{"a":"é🦕"}');
  });

  test.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"price":1,"name":"x","price":2}', 'price'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"":1,"":2}', ''],
    ['{"dates":[{"x":1}],"x":2,"dates":3}', 'dates'],
    ['{"o":{"a":1},"p":{"a":1}}', undefined],
    ['{"dates":[{"x":1,"x":2}]}', undefined], // nested objects are refused by validation anyway
    ['{"a":"\\"a\\":1","b":2}', undefined],
    ['{"a":[1,2,{"b":"}"}],"b":1}', undefined],
  ])('%s repeats %j at the top level', (text, path) => {
    JSON.parse(text);
    expect(duplicateKey(text)).toBe(path);
  });

  test('a property with an empty name is named as such, not "must be a JSON object"', () => {
    const problem = problemOf(() => validate(CreateEventRequest, { ...valid, '': 1 }, 'request body'));
    expect(problem.problem.errors).toEqual([{ field: '', message: 'is not a known field (the empty name "")' }]);
  });
});

describe('the end of the calendar', () => {
  const anyDate = fc
    .date({ min: new Date(`${FIRST_DATE}T00:00:00Z`), max: new Date(`${LAST_DATE}T23:59:59Z`), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10));

  test('addDays stays inside 1900-01-01..9999-12-31', () => {
    expect(addDays('9999-12-25', 7)).toBe('9999-12-31');
    expect(addDays('9999-12-31', 1)).toBe('9999-12-31');
    expect(addDays('1900-01-03', -7)).toBe('1900-01-01');
    fc.assert(
      fc.property(anyDate, fc.integer({ min: -400, max: 400 }), (date, days) => {
        expect(isCalendarDate(addDays(date, days))).toBe(true);
      }),
    );
  });

  test('page 1000000 is "at most" the cap, not "not a whole number"', () => {
    const problem = problemOf(() => validate(ListEventsQuery, { page: '1000000', limit: '9'.repeat(400) }, 'query string'));
    expect(problem.problem.errors).toEqual([
      { field: 'page', message: `must be at most ${LIMITS.maxListPage}` },
      { field: 'limit', message: 'must be at most 30' },
    ]);
  });

  test('the list query, over the whole calendar with every combination of given and defaulted bounds, is a valid range or a 400', () => {
    fc.assert(
      fc.property(anyDate, fc.option(anyDate), fc.option(anyDate), (today, startDate, endDate) => {
        const query: Record<string, string> = {};
        if (startDate !== null) query.startDate = startDate;
        if (endDate !== null) query.endDate = endDate;
        let range: ReturnType<typeof parseListQuery>;
        try {
          range = parseListQuery({ queryStringParameters: query, multiValueQueryStringParameters: null }, new Date(`${today}T12:00:00Z`));
        } catch (error) {
          expect(error).toBeInstanceOf(HttpProblem);
          expect((error as HttpProblem).problem.status).toBe(400);
          return;
        }
        expect(isCalendarDate(range.startDate) && isCalendarDate(range.endDate)).toBe(true);
        const days = daysBetween(range.startDate, range.endDate);
        expect(days >= 0 && days <= 366).toBe(true);
        if (endDate === null) expect(range.endDate).toBe(addDays(range.startDate, 7));
      }),
      { numRuns: 3000 },
    );
  });
});
