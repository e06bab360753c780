// The character rules of the three text fields, as code-point ranges. Each field's rule is ONE
// regular expression, built here from the ranges: the handlers validate with it and the OpenAPI
// document publishes the same source as the field's `pattern`. Written in the portable subset of
// JSON Schema patterns (classes, ranges, `*`, anchors; BMP characters as `\uXXXX`, the few
// supplementary ones as literal characters), so that Python and other non-ECMA tools can use it.

type Range = readonly [first: number, last: number];

/** C0 and C1 control characters (General_Category Cc). */
const CONTROL: Range[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
];
const TAB_LINE_FEED_CARRIAGE_RETURN: Range[] = [
  [0x09, 0x0a],
  [0x0d, 0x0d],
];
/** Unicode's Bidi_Control property: the "Trojan Source" embeddings, overrides, isolates and marks. */
export const BIDI_CONTROL: Range[] = [
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];
/** LINE SEPARATOR and PARAGRAPH SEPARATOR: line breaks, like the control characters CR and LF. */
const UNICODE_LINE_BREAKS: Range[] = [[0x2028, 0x2029]];
/** Unpaired surrogates (not Unicode text; DynamoDB refuses them) and U+FFFD, which stands for bytes that were not UTF-8. */
const NOT_TEXT: Range[] = [
  [0xd800, 0xdfff],
  [0xfffd, 0xfffd],
];
/** What String.prototype.trim() removes (ECMAScript WhiteSpace and LineTerminator). */
const WHITE_SPACE: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 16): rendered as nothing. */
const DEFAULT_IGNORABLE: Range[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

/** Sorted, merged ranges of `ranges` minus `removed`. */
function normalise(ranges: readonly Range[], removed: readonly Range[] = []): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of sorted) {
    const previous = merged.at(-1);
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  let result: Range[] = merged;
  for (const [cutFirst, cutLast] of removed) {
    result = result.flatMap(([first, last]): Range[] => {
      if (cutLast < first || cutFirst > last) return [[first, last]];
      return [...(first < cutFirst ? [[first, cutFirst - 1] as Range] : []), ...(cutLast < last ? [[cutLast + 1, last] as Range] : [])];
    });
  }
  return result;
}

function character(codePoint: number): string {
  return codePoint > 0xffff ? String.fromCodePoint(codePoint) : `\\u${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

function classBody(ranges: readonly Range[]): string {
  return ranges.map(([first, last]) => (first === last ? character(first) : `${character(first)}-${character(last)}`)).join('');
}

export interface TextRule {
  /** The field's whole rule as a JSON Schema pattern (ECMA-262 with the `u` flag, portable subset). */
  pattern: string;
  regex: RegExp;
  /** Why `text` breaks the rule (undefined when it does not). */
  violation: (text: string) => string | undefined;
}

/**
 * Text that contains none of `forbidden` and at least one visible character: one that is neither
 * white space nor default-ignorable (U+200B, U+200D, U+FEFF, variation selectors, tags...). Such
 * characters may appear around and between visible ones (a ZWJ inside an emoji sequence), but
 * text made only of them is empty. The pattern `^I*VA*$` (I invisible, V visible, A = I or V) is
 * deterministic: I and V are disjoint, so matching is linear even on text that fails.
 */
function textRule(forbidden: readonly Range[], forbiddenMessage: string): TextRule {
  const forbiddenRanges = normalise(forbidden);
  const invisible = normalise([...WHITE_SPACE, ...DEFAULT_IGNORABLE], forbiddenRanges);
  const notVisible = normalise([...forbiddenRanges, ...invisible]);
  const pattern = `^[${classBody(invisible)}]*[^${classBody(notVisible)}][^${classBody(forbiddenRanges)}]*$`;
  const regex = new RegExp(pattern, 'u');
  const has = (ranges: readonly Range[]) => new RegExp(`[${classBody(normalise(ranges))}]`, 'u');
  const checks: [RegExp, string][] = [
    [has(NOT_TEXT.slice(0, 1)), 'must be well-formed Unicode (no unpaired surrogates)'],
    [has(NOT_TEXT.slice(1)), 'must not contain U+FFFD, which stands for bytes that were not UTF-8'],
    [has(BIDI_CONTROL), 'must not contain bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069)'],
    [new RegExp(`[${classBody(forbiddenRanges)}]`, 'u'), forbiddenMessage],
  ];
  return {
    pattern,
    regex,
    violation: (text) => {
      if (regex.test(text)) return undefined;
      return checks.find(([found]) => found.test(text))?.[1] ?? 'must contain at least one visible character';
    },
  };
}

/** `name` and `location`: one line. */
export const SINGLE_LINE_TEXT = textRule([...CONTROL, ...BIDI_CONTROL, ...UNICODE_LINE_BREAKS, ...NOT_TEXT], 'must not contain control characters or line breaks');
/** `eventDescription`: line breaks and tabs allowed. */
export const MULTI_LINE_TEXT = textRule(
  normalise([...CONTROL, ...BIDI_CONTROL, ...NOT_TEXT], TAB_LINE_FEED_CARRIAGE_RETURN),
  'must not contain control characters other than tab, line feed and carriage return',
);

/** Length in Unicode code points, as JSON Schema's minLength and maxLength count it. */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}
