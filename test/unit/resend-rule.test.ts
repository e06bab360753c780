// The documented client's resend rule (bench/support/resend-rule.ts), which the tests' client and
// the benchmarks share: a retried status with Retry-After waits up to Retry-After, a write's 504 up
// to 1 s, anything else is final; a request whose connection closed before any answer is sent again.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedBeforeAnswer, resendWaitMs } from '../../bench/support/resend-rule.ts';

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

async function fetchError(url: string): Promise<unknown> {
  try {
    await fetch(url);
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

test('a connection closed before any answer is sent again; a refused connection is not', async () => {
  // A real server that closes every connection as a request arrives, as one whose keep-alive
  // timeout passed does under a request sent on the idle connection.
  const server: Server = createServer((request) => request.socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    expect(closedBeforeAnswer(await fetchError(`http://127.0.0.1:${port}/`))).toBe(true);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  expect(closedBeforeAnswer(await fetchError(`http://127.0.0.1:${port}/`))).toBe(false);
  expect(closedBeforeAnswer(new Error('other'))).toBe(false);
});
