// Checks of a request body's text that JSON.parse cannot make: strict UTF-8 decoding, duplicate
// object keys, and numbers that a double would round.
import { JsonNumberText, sameDecimal } from '../events/decimal-text.ts';
import { HttpProblem } from '../events/problems.ts';

let strictUtf8: InstanceType<typeof TextDecoder> | undefined; // built on first use, like every module-level value here that bundles could not drop

/**
 * The body's bytes as text, or undefined when they are not UTF-8 (invalid sequences, overlong
 * forms, encoded surrogates: the fatal decoder refuses each of them). A BOM is kept, so that
 * JSON.parse refuses it as RFC 8259 allows.
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    strictUtf8 ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The first key that the top-level object of `text` (which JSON.parse has accepted, so the scan
 * may assume valid JSON) gives twice; undefined when there is none. Only the top level matters:
 * no field of a request body holds an object. Hand-written: JSON.parse keeps the last value
 * silently, and a second, duplicate-aware parser from the registry would double the parsing for
 * this one check. Keys compare after unescaping, so `"a"` and `"\u0061"` are the same key.
 */
export function duplicateKey(text: string): string | undefined {
  const keys = new Set<string>();
  let depth = 0;
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        expectingKey = false;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      expectingKey = ++depth === 1;
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',') {
      expectingKey = depth === 1;
    }
  }
  return undefined;
}

/**
 * JSON.parse, with every number whose text the double does not represent exactly (it was rounded,
 * underflowed to 0 or overflowed to Infinity) replaced by a JsonNumberText holding that text, so the
 * schemas judge the number sent, not its rounding. Reads the reviver's `context.source`
 * (ECMAScript JSON.parse source text access, in V8 since Node 21; our runtime is Node 24).
 */
export function parseJsonText(text: string): unknown {
  const parsed: unknown = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && !sameDecimal(context.source, String(value))
      ? new JsonNumberText(context.source, value)
      : value,
  );
  // A bare number as the whole body stays a number: it is refused as "not a JSON object" anyway.
  return parsed instanceof JsonNumberText ? parsed.rounded : parsed;
}

function textProblem(kind: 'malformed-json' | 'validation-error', detail: string, field = '', message = detail): HttpProblem {
  return new HttpProblem(kind, detail, kind === 'validation-error' ? { errors: [{ field, message }] } : {});
}

/**
 * The JSON object a text holds, by the rules of every request body: no U+FFFD (it stands for
 * bytes that were not UTF-8), not empty, valid JSON (numbers no double holds exactly kept as their
 * text, for the schemas to refuse), an object, no key given twice. Anything else is a 400 problem
 * whose detail begins with `what` ("The request body"; the import CLI names the line).
 */
export function parseJsonObject(text: string, what = 'The request body'): Record<string, unknown> {
  if (text.includes('\uFFFD')) throw textProblem('malformed-json', `${what} contains U+FFFD, which stands for bytes that were not UTF-8`);
  if (text.trim() === '') throw textProblem('validation-error', 'A JSON request body is required', '', 'is required');
  let body: unknown;
  try {
    body = parseJsonText(text);
  } catch (error) {
    throw textProblem('malformed-json', `${what} is not valid JSON: ${(error as Error).message}`);
  }
  // Every operation's body is an object; valibot's object schemas would also accept arrays.
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw textProblem('validation-error', `${what} must be a JSON object`, '', 'must be a JSON object');
  }
  const duplicate = duplicateKey(text);
  if (duplicate !== undefined)
    throw textProblem(
      'validation-error',
      `${what} is invalid: "${duplicate}" is given more than once`,
      duplicate,
      'is given more than once',
    );
  return body as Record<string, unknown>;
}
