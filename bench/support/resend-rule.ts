// The documented client's resend rule (docs/API.md, errors and Write outcomes), in one place for the
// benchmarks and the tests (test/support/api-client.ts): bench/ imports nothing of test/, and tests
// may import bench/.

/** Answers after which nothing was written and nothing will be, when they carry Retry-After (docs/API.md, errors). */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([409, 429, 503]);

/** Methods that write, and so may answer 504 when a commit's outcome is unknown (docs/API.md, Write outcomes). */
const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/** Whether `method` writes (and so is sent with an Idempotency-Key and resent after a 504). */
export function isWriteMethod(method: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase());
}

/**
 * How long to wait before sending the request again after this answer, or undefined when it is
 * final. A status of `statuses` with Retry-After: a random wait of up to Retry-After seconds; a
 * 504 to a write (sent with its Idempotency-Key): up to 1 s.
 */
export function resendWaitMs(
  method: string,
  answer: { status: number; headers: Pick<Headers, 'get'> },
  statuses: ReadonlySet<number> = RETRIED_STATUSES,
): number | undefined {
  const retryAfter = answer.headers.get('retry-after');
  if (statuses.has(answer.status) && retryAfter !== null) return Math.random() * 1000 * Number(retryAfter);
  if (answer.status === 504 && isWriteMethod(method)) return Math.random() * 1000;
  return undefined;
}

/**
 * Whether a fetch got no answer at all because its connection closed under it (docs/API.md, the
 * "none" row): a kept-alive connection the server closed as the request went out, which a client
 * whose event loop stalls past the keep-alive timeout meets on a busy machine. It is sent again
 * like a 504: a write with its same Idempotency-Key. A server that is gone refuses the next
 * connection (ECONNREFUSED), which this does not cover.
 */
export function closedBeforeAnswer(error: unknown): boolean {
  // Read by shape, not instanceof: fetch's errors may come from another realm (jest's test context).
  const cause = typeof error === 'object' && error !== null && 'cause' in error ? error.cause : undefined;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/** Methods a client may send again by itself after a connection closed under them (RFC 9110 §9.2.1: safe). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `send` (a fetch) that sends a safe request once more when its connection closed before any
 * answer (closedBeforeAnswer), as docs/API.md tells clients and RFC 9112 §9.3.1.1 lets a user agent
 * do by itself (browsers do). Writes pass through unchanged: they are resent, with their
 * Idempotency-Key, only by a caller that knows it (test/support/api-client.ts, apiRetrying). A
 * Request object passes through too: its body may be a stream, which cannot be sent twice.
 */
export function resendingSafeRequests(send: typeof fetch): typeof fetch {
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    // By shape, not instanceof: a Request may come from another realm (jest's test context).
    if ((typeof input === 'object' && 'method' in input) || !SAFE_METHODS.has(method)) return send(input, init);
    try {
      return await send(input, init);
    } catch (error) {
      if (!closedBeforeAnswer(error)) throw error;
      return send(input, init);
    }
  };
}
