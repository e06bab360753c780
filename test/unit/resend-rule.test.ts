// The documented client's resend rule (bench/support/resend-rule.ts), which the tests' client and
// the benchmarks share: a retried status with Retry-After waits up to Retry-After, a write's 504 up
// to 1 s, anything else is final.
import { resendWaitMs } from '../../bench/support/resend-rule.ts';

const answer = (status: number, retryAfter?: string) => ({ status, headers: new Headers(retryAfter ? { 'Retry-After': retryAfter } : {}) });

test('a 409, 429 or 503 with Retry-After waits at most Retry-After seconds', () => {
  for (const status of [409, 429, 503]) {
    const wait = resendWaitMs('GET', answer(status, '2'));
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThanOrEqual(2000);
  }
});

test('without Retry-After, or a status the caller does not resend, the answer is final', () => {
  expect(resendWaitMs('GET', answer(503))).toBeUndefined();
  expect(resendWaitMs('GET', answer(409, '1'), new Set([429, 503]))).toBeUndefined();
  expect(resendWaitMs('GET', answer(500, '1'))).toBeUndefined();
});

test('a 504 is resent after up to 1 s for a write only', () => {
  expect(resendWaitMs('PATCH', answer(504))).toBeLessThanOrEqual(1000);
  expect(resendWaitMs('GET', answer(504))).toBeUndefined();
});
