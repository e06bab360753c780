// The request headers the operations read: If-Match and If-None-Match (RFC 9110 §13.1), the body's
// Content-Type, and Idempotency-Key; a value outside its grammar or bounds is a 400 problem. Free
// of middy and the SDK, so the OpenAPI generator builds its examples with the very same functions.
import { LIMITS } from '../events/limits.ts';
import { HttpProblem } from '../events/problems.ts';
import type { HttpEvent } from './http.ts';
import { parseEntityTagList, versionsOf, type ConditionalHeaders, type Preconditions } from './preconditions.ts';

type HeaderEvent = Pick<HttpEvent, 'headers' | 'multiValueHeaders'>;

/** Every field line of a header (lower-case name, after middy's header normaliser). */
export function fieldLines(event: HeaderEvent, name: string): string[] | undefined {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- events from the local gateway and tests may have no multiValueHeaders
  return event.multiValueHeaders?.[name] ?? (event.headers[name] === undefined ? undefined : [event.headers[name]]);
}

function headerProblem(field: string, message: string): HttpProblem {
  return new HttpProblem('validation-error', `${field} ${message}`, { errors: [{ field, message }] });
}

const ENTITY_TAGS_MESSAGE = 'must be * or a list of entity-tags such as "3"';

/** If-Match and If-None-Match (RFC 9110 §13.1.1, §13.1.2), on any method; a field value outside their grammar is a 400 problem. */
export function conditionalHeaders(event: HeaderEvent): ConditionalHeaders {
  const ifMatch = parseEntityTagList(fieldLines(event, 'if-match'));
  if (ifMatch.kind === 'invalid') throw headerProblem('If-Match', ENTITY_TAGS_MESSAGE);
  const ifNoneMatch = parseEntityTagList(fieldLines(event, 'if-none-match'));
  if (ifNoneMatch.kind === 'invalid') throw headerProblem('If-None-Match', ENTITY_TAGS_MESSAGE);
  return { ifMatch, ifNoneMatch };
}

/** The preconditions of a write of one event: If-Match reduced to the versions of ours it names. */
export function preconditions(event: HeaderEvent): Preconditions {
  const { ifMatch, ifNoneMatch } = conditionalHeaders(event);
  return { ifMatch: versionsOf(ifMatch), ifNoneMatch };
}

/** Media types a request body may be sent as. */
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/merge-patch+json']);

/**
 * Checks that the body is declared as JSON in UTF-8. Content-Type is a singleton field (RFC 9110
 * §8.3): two field lines, or a parameter given twice (RFC 6838 §4.3: "an error"), leave the media
 * type undetermined, so the request is malformed: 400, not 415. A well-formed type that is not
 * JSON, or a charset other than UTF-8, is unsupported: 415 (RFC 9110 §15.5.16). API Gateway passes
 * every field line in `multiValueHeaders` and only the last in `headers`
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#apigateway-multivalue-headers-and-parameters),
 * so the lines are counted there.
 */
export function requireJsonContentType(event: HeaderEvent): void {
  const lines = fieldLines(event, 'content-type') ?? [];
  if (lines.length > 1) throw headerProblem('Content-Type', 'must be given once');
  const contentType = lines[0] ?? '';
  const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  const values = new Map<string, string>();
  for (const parameter of parameters) {
    if (parameter === '') continue; // RFC 9110 §5.6.6 allows empty parameters
    const equals = parameter.indexOf('=');
    const name = (equals < 0 ? parameter : parameter.slice(0, equals)).trim();
    if (values.has(name)) throw headerProblem('Content-Type', `must not give the parameter ${name} twice`);
    values.set(
      name,
      parameter
        .slice(equals + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1'),
    );
  }
  const charset = values.get('charset');
  if (!JSON_MEDIA_TYPES.has(mediaType) || (charset !== undefined && charset !== 'utf-8')) {
    throw new HttpProblem(
      'unsupported-media-type',
      `The request body must be sent as application/json (UTF-8), not ${contentType ? `"${contentType}"` : 'without a Content-Type'}`,
    );
  }
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
