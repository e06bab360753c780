// Every `pattern` of the published document compiles and means the same in each regex engine
// this machine has (ECMA-262 with and without `u`, RE2, Python `re`, Java), and `spectral lint`
// with Spectral's `spectral:oas` ruleset reports no error. The text patterns also agree with the
// server's own rule, except where their descriptions say the server decides alone.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MULTI_LINE_TEXT, obeysTextRule, SINGLE_LINE_TEXT } from '../../functions/events/text-rules.ts';
import { buildOpenApiDocument } from '../../lib/openapi/openapi-document.ts';
import { textRulePattern } from '../../lib/openapi/text-patterns.ts';
import { decidedByServerOnly } from '../support/text-pattern-gaps.ts';
import { ENGINES } from '../support/regex-engines/engines.ts';

function patternsOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsOf(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.add(value);
      else patternsOf(value, found);
    }
  }
  return found;
}

const patterns = [...patternsOf(buildOpenApiDocument())];
const TAG = '\u{E0001}';
/** Texts of every kind the patterns tell apart: visible, invisible, controls, line breaks, bidi, astral, tags, dates, entity-tags. */
const samples = [
  'Museum tour',
  ' x ',
  'é',
  'Ⅷ',
  '𝒳',
  '\u00a0x',
  'x\u00ad',
  '\u200b',
  '\u200bx',
  'x\u200dy',
  '\ufeffx',
  '👨‍👩‍👧',
  '🏴󠁧󠁢󠁥󠁮󠁧󠁿',
  TAG,
  `${TAG}x`,
  `x${TAG}`,
  '\u{1BCA0}',
  '\u{1D173}x',
  '',
  '   ',
  '\t',
  'a\tb',
  'a\nb',
  'a\rb',
  'a\u0000',
  '\u007f',
  'x\u0085y',
  '\u202ex',
  'x\u2066',
  '\u061c',
  'x\u2028y',
  'x\u2029y',
  '\ufffd',
  'x\uffff',
  '\ufff9x',
  '2026-12-01',
  '1899-12-31',
  '9999-12-31',
  '2026-1-01',
  '"3"',
  '*',
  'W/"3", "4"',
  '"a,b"',
  ',,',
  ' "1" , ',
  '"a"b"',
  'abc',
  '"3',
  '"\u00e9"',
  '"\u0100"',
];
/** `$` of Python and Java also matches before a final line terminator: compared only in full-match form below. */
const trailingTerminators = ['x\n', 'x\r\n', 'x\u0085', 'x\u2028', '"3"\n', '2026-12-01\n'];

describe('the patterns of the published document', () => {
  const reference = ENGINES['ECMA-262 (u)']!(patterns, samples);

  test("the engines include RE2 and, where installed, Python and Java (Rust's regex crate cannot be built offline)", () => {
    expect(Object.keys(ENGINES)).toEqual(expect.arrayContaining(['ECMA-262 (u)', 'ECMA-262 (no u)', 'RE2']));
  });

  test('there are text, date and entity-tag patterns, none with astral characters, surrogates or \\p', () => {
    expect(patterns.length).toBeGreaterThanOrEqual(5);
    for (const pattern of patterns) {
      expect(pattern).not.toMatch(/[\u{10000}-\u{10FFFF}]/u);
      expect(pattern).not.toMatch(/\\[pP]\{|\\u\{|\\x\{|\\u[dD][89a-fA-F]/);
      expect(reference.find((row) => row.startsWith('E'))).toBeUndefined();
    }
  });

  test.each(Object.keys(ENGINES).filter((name) => name !== 'ECMA-262 (u)'))(
    '%s compiles each and matches exactly the samples ECMA-262 with `u` matches',
    (engine) => {
      const matrix = ENGINES[engine]!(patterns, samples);
      expect(Object.fromEntries(patterns.map((p, i) => [p, matrix[i]]))).toEqual(
        Object.fromEntries(patterns.map((p, i) => [p, reference[i]])),
      );
    },
  );

  test('on texts that end in a line terminator RE2 agrees too; Python agrees once `\\Z` follows (its `$` also matches before a final "\\n")', () => {
    const expected = ENGINES['ECMA-262 (u)']!(patterns, trailingTerminators);
    for (const engine of ['ECMA-262 (no u)', 'RE2']) expect(ENGINES[engine]!(patterns, trailingTerminators)).toEqual(expected);
    // The one difference the field descriptions name: Python's and Java's `$` (no ECMA-262 `\z` exists to avoid it).
    const python = ENGINES['Python re'];
    if (python)
      expect(
        python(
          patterns.map((p) => `(?:${p})\\Z`),
          trailingTerminators,
        ),
      ).toEqual(expected);
  });

  test.each([
    ['name and location', SINGLE_LINE_TEXT],
    ['eventDescription', MULTI_LINE_TEXT],
  ] as const)('the %s pattern accepts exactly what the server accepts, but for astral invisible characters alone', (_name, rule) => {
    const pattern = new RegExp(textRulePattern(rule), 'u');
    for (const text of [...samples, ...trailingTerminators]) {
      expect({ text, matches: pattern.test(text) }).toEqual({ text, matches: decidedByServerOnly(text) || obeysTextRule(rule, text) });
    }
  });
});

test('spectral lint with spectral:oas finds no error in openapi/openapi.json', async () => {
  const run = promisify(execFile);
  const { stdout } = await run(
    'node_modules/.bin/spectral',
    ['lint', 'openapi/openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'error', '--quiet'],
    {
      env: { ...process.env, SCARF_ANALYTICS: 'false' },
      timeout: 120_000,
    },
  ).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }));
  const errors = (JSON.parse(stdout || '[]') as { severity: number; code: string; message: string; path: string[] }[]).filter(
    (result) => result.severity === 0,
  );
  expect(errors).toEqual([]);
});
