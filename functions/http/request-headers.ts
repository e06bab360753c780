// The request headers a write reads: If-Match (RFC 9110 §13.1.1) and Idempotency-Key, a value
// outside its grammar or bounds a 400 problem. Free of middy and the SDK, so the OpenAPI generator
// builds its examples with the very same functions.
import { LIMITS } from '../events/limits.ts';
import { HttpProblem } from '../events/problems.ts';
import type { HttpEvent } from './http.ts';
import { parseIfMatch, type IfMatch } from './preconditions.ts';

/** The If-Match precondition of a write (RFC 9110 §13.1.1); a field value outside its grammar is a 400 problem. */
export function ifMatch(event: Pick<HttpEvent, 'headers' | 'multiValueHeaders'>): Exclude<IfMatch, { kind: 'invalid' }> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- events from the local gateway and tests may have no multiValueHeaders
  const lines = event.multiValueHeaders?.['if-match'] ?? (event.headers['if-match'] === undefined ? undefined : [event.headers['if-match']]);
  const parsed = parseIfMatch(lines);
  if (parsed.kind === 'invalid') {
    const message = 'must be * or a list of entity-tags such as "3"';
    throw new HttpProblem('validation-error', `If-Match ${message}`, { errors: [{ field: 'If-Match', message }] });
  }
  return parsed;
}

/** The Idempotency-Key header, if sent; a 400 problem when empty or over LIMITS.idempotencyKeyLength. */
export function idempotencyKey(event: Pick<HttpEvent, 'headers'>): string | undefined {
  const key = event.headers['idempotency-key'];
  if (key !== undefined && (key.length === 0 || key.length > LIMITS.idempotencyKeyLength)) {
    const message = `must be 1 to ${LIMITS.idempotencyKeyLength} characters`;
    throw new HttpProblem('validation-error', `Idempotency-Key ${message}`, { errors: [{ field: 'Idempotency-Key', message }] });
  }
  return key;
}
