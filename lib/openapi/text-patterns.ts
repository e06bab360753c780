// A text rule of functions/shared/text-rules.ts as a JSON Schema pattern in the portable subset
// (no \p{..}: Python's `re` and other non-ECMA tools lack Unicode properties). The character
// classes are computed from the rule's own regular expressions over every code point, so the
// pattern cannot drift from what the handlers check.
import { VISIBLE, type TextRule } from '../../functions/shared/text-rules.ts';

type Range = [first: number, last: number];

function character(codePoint: number): string {
  // Supplementary characters as themselves: `\u{...}` is ECMA-only, and surrogate-pair escapes mean two characters to Python.
  return codePoint > 0xffff ? String.fromCodePoint(codePoint) : `\\u${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

function classBody(ranges: readonly Range[]): string {
  return ranges.map(([first, last]) => (first === last ? character(first) : `${character(first)}-${character(last)}`)).join('');
}

function add(ranges: Range[], codePoint: number): void {
  const last = ranges.at(-1);
  if (last && last[1] === codePoint - 1) last[1] = codePoint;
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
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
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
