// The documented client's resend rule (bench/support/resend-rule.ts), which the tests' client and
// the benchmarks share: a retried status with Retry-After waits up to Retry-After, a write's 504 up
// to 1 s, anything else is final; a request whose connection closed before any answer is sent again
// (by the system tier's fetch itself for a safe request: test/support/resending-fetch.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedBeforeAnswer, resendingSafeRequests, resendWaitMs } from '../../bench/support/resend-rule.ts';

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

test('a safe request whose connection closed before any answer is sent once more; a write, a Request object or a second close is not', async () => {
  // A real server that closes the connection of every other request before answering it.
  let received = 0;
  const server: Server = createServer((request, response) => {
    received += 1;
    if (received % 2 === 1) request.socket.destroy();
    else response.end('answered');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const send = resendingSafeRequests(fetch);
  try {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      const sentBefore = received;
      expect((await send(url, { method })).status).toBe(200);
      expect(received - sentBefore).toBe(2);
    }
    expect(await (await send(new URL(url))).text()).toBe('answered');
    const sentBefore = received;
    const unsent = await send(new Request(url)).catch((error: unknown) => error);
    expect(closedBeforeAnswer(unsent)).toBe(true);
    expect(received - sentBefore).toBe(1);
    received = 0;
    const failure = await send(url, { method: 'POST', body: 'x' }).catch((error: unknown) => error);
    expect(closedBeforeAnswer(failure)).toBe(true);
    expect(received).toBe(1);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  // A server that closes every connection: the one resend gets no answer either, and says so.
  let closed = 0;
  const closing: Server = createServer((request) => {
    closed += 1;
    request.socket.destroy();
  });
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  try {
    const failure = await resendingSafeRequests(fetch)(`http://127.0.0.1:${(closing.address() as AddressInfo).port}/`).catch(
      (error: unknown) => error,
    );
    expect(closedBeforeAnswer(failure)).toBe(true);
    expect(closed).toBe(2);
  } finally {
    await new Promise((resolve) => closing.close(resolve));
  }
});
