// The character rules of the three text fields, in Unicode property terms. The OpenAPI document
// publishes each rule as a `pattern` in the portable regex subset, derived from these very
// regular expressions code point by code point (lib/openapi/text-patterns.ts), so the rule is
// written once and the handler bundles carry only these few short expressions.

/** A character that is rendered: neither white space nor default-ignorable (U+200B, U+200D, U+FEFF, U+00AD, variation selectors, tags...). */
export const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}]/u;
/** Unicode's Bidi_Control: the "Trojan Source" embeddings, overrides, isolates and marks (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). */
const BIDI_CONTROL = /\p{Bidi_Control}/u;

export interface TextRule {
  /** Characters the field never holds: besides its own, always unpaired surrogates, Bidi_Control and U+FFFD. */
  forbidden: RegExp;
  forbiddenMessage: string;
}

/** `name` and `location`: one line, so no control characters and no U+2028/U+2029 either. */
export const SINGLE_LINE_TEXT: TextRule = {
  forbidden: /[\p{Cc}\p{Cs}\p{Bidi_Control}\u2028\u2029\uFFFD]/u,
  forbiddenMessage: 'must not contain control characters or line breaks',
};
/** `eventDescription`: tab, line feed and carriage return allowed. */
export const MULTI_LINE_TEXT: TextRule = {
  forbidden: /[^\P{Cc}\t\n\r]|[\p{Cs}\p{Bidi_Control}\uFFFD]/u,
  forbiddenMessage: 'must not contain control characters but tab, LF and CR',
};

/** Text with none of the rule's forbidden characters and at least one visible one. Invisible characters may appear around and between visible ones (a ZWJ inside an emoji sequence). */
export function obeysTextRule(rule: TextRule, text: string): boolean {
  return !rule.forbidden.test(text) && VISIBLE.test(text);
}

/** Why `text` breaks the rule. */
export function textRuleViolation(rule: TextRule, text: string): string {
  if (!text.isWellFormed()) return 'must be well-formed Unicode';
  if (text.includes('\uFFFD')) return 'must not contain U+FFFD';
  if (BIDI_CONTROL.test(text)) return 'must not contain bidirectional controls';
  if (rule.forbidden.test(text)) return rule.forbiddenMessage;
  return 'must contain at least one visible character';
}

/** Length in Unicode code points, as JSON Schema's minLength and maxLength count it. */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length += 1;
  return length;
}
