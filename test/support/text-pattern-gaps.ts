// Where the text patterns of the OpenAPI document (lib/openapi/text-patterns.ts) are looser than
// the server: the tests that compare the two leave these texts to the server.
import { VISIBLE } from '../../functions/events/text-rules.ts';

/**
 * Texts on which a text pattern is looser than the server (which refuses them with 400): ill-formed
 * UTF-16 (unpaired surrogates), and text with no visible character but an invisible one outside
 * the BMP, which the pattern counts as visible. Everywhere else the pattern and the rule agree.
 */
export function decidedByServerOnly(text: string): boolean {
  return !text.isWellFormed() || (!VISIBLE.test(text) && /[\u{10000}-\u{10FFFF}]/u.test(text));
}
