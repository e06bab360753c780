// A text rule of functions/events/text-rules.ts as a JSON Schema pattern that compiles and means
// the same in ECMA-262 with and without the `u` flag, Python's `re`, RE2 and Rust's regex crate
// (and Java): only `\xHH` escapes (Latin-1) and literal BMP characters inside classes, no
// `\p{..}`, no `\u`/`\x{..}` escapes (each missing from one engine), no surrogates and no
// astral characters. What cannot be said that way is left to the server, and the field
// descriptions say so: lone surrogates, and invisible characters outside the BMP (the tag
// characters U+E0000-U+E0FFF, ...), which the pattern counts as visible. So a text of astral
// invisible characters only matches the pattern and is still refused (400). Every other text is
// judged alike by the pattern and the server: a UTF-16 engine reads an astral character as two
// surrogates, which no class below names, so it matches exactly where a code-point engine's
// negated class matches the whole character. The classes are computed from the rule's own
// regular expressions over every BMP code point, so the pattern cannot drift from the handlers.
import { VISIBLE, type TextRule } from '../../functions/events/text-rules.ts';

type Range = [first: number, last: number];

function character(codePoint: number): string {
  // `\xHH` is read alike everywhere; above U+00FF every engine takes the character itself.
  return codePoint <= 0xff ? `\\x${codePoint.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCodePoint(codePoint);
}

function classBody(ranges: readonly Range[]): string {
  return ranges.map(([first, last]) => (first === last ? character(first) : `${character(first)}-${character(last)}`)).join('');
}

function add(ranges: Range[], codePoint: number): void {
  const last = ranges.at(-1);
  if (last?.[1] === codePoint - 1) last[1] = codePoint;
  else ranges.push([codePoint, codePoint]);
}

const patterns = new Map<TextRule, string>();

/**
 * `^I*VA*$`: I the invisible characters the rule allows, V the visible ones, A = I or V. I and V
 * are disjoint, so matching is deterministic (linear even on text that fails).
 */
export function textRulePattern(rule: TextRule): string {
  let pattern = patterns.get(rule);
  if (pattern === undefined) {
    const forbidden: Range[] = [];
    const invisible: Range[] = [];
    const notVisible: Range[] = [];
    for (let codePoint = 0; codePoint <= 0xffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue; // surrogates: left to the server
      const text = String.fromCodePoint(codePoint);
      if (rule.forbidden.test(text)) {
        add(forbidden, codePoint);
        add(notVisible, codePoint);
      } else if (!VISIBLE.test(text)) {
        add(invisible, codePoint);
        add(notVisible, codePoint);
      }
    }
    pattern = `^[${classBody(invisible)}]*[^${classBody(notVisible)}][^${classBody(forbidden)}]*$`;
    patterns.set(rule, pattern);
  }
  return pattern;
}
