// What "a documented problem" means for the reliability tests: RFC 9457 problem+json whose type
// is one of the catalogue's (functions/events/problems.ts) with that kind's status and title.
import { PROBLEM_CONTENT_TYPE, PROBLEM_KINDS, PROBLEM_TYPE_BASE, type ProblemKind } from '../../functions/events/problems.ts';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The problem kind of an error response; throws with a description when it is not a documented problem. */
export function documentedProblemKind(response: RawResponse, options: { bodyless?: boolean } = {}): ProblemKind {
  const fail = (why: string) => {
    throw new Error(`${response.status} is not a documented problem: ${why}\n${response.text.slice(0, 500)}`);
  };
  const contentType = response.headers.get('content-type') ?? '';
  if (contentType.split(';')[0]?.trim() !== PROBLEM_CONTENT_TYPE) fail(`content-type "${contentType}"`);
  if (response.headers.get('x-content-type-options') !== 'nosniff') fail('no X-Content-Type-Options: nosniff');
  if (options.bodyless) {
    // A HEAD response carries the headers of the problem but no body.
    const kind = (Object.keys(PROBLEM_KINDS) as ProblemKind[]).find((k) => PROBLEM_KINDS[k].status === response.status);
    if (!kind) fail('no problem kind has this status');
    return kind as ProblemKind;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.text) as Record<string, unknown>;
  } catch {
    return fail('the body is not JSON');
  }
  const type = typeof body.type === 'string' ? body.type : '';
  const kind = type.startsWith(PROBLEM_TYPE_BASE) ? (type.slice(PROBLEM_TYPE_BASE.length) as ProblemKind) : undefined;
  if (!kind || !(kind in PROBLEM_KINDS)) return fail(`unknown type "${type}"`);
  const documented = PROBLEM_KINDS[kind];
  if (documented.status !== response.status || body.status !== response.status) fail(`type ${kind} is documented as ${documented.status}`);
  if (body.title !== documented.title) fail(`title "${String(body.title)}"`);
  if (typeof body.detail !== 'string' || body.detail.length === 0) fail('no detail');
  return kind;
}

/** Asserts a temporary-failure answer: 503 service-unavailable with a positive Retry-After. */
export function expectServiceUnavailable(response: RawResponse): void {
  if (response.status !== 503) throw new Error(`expected 503, got ${response.status}: ${response.text.slice(0, 300)}`);
  const kind = documentedProblemKind(response);
  if (kind !== 'service-unavailable') throw new Error(`expected service-unavailable, got ${kind}`);
  const retryAfter = Number(response.headers.get('retry-after'));
  if (!Number.isInteger(retryAfter) || retryAfter < 1) throw new Error(`Retry-After is "${response.headers.get('retry-after')}"`);
}
