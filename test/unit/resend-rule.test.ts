// The documented client's resend rule (bench/support/resend-rule.ts), which the tests' client and
// the benchmarks share: a retried status with Retry-After waits up to Retry-After, a write's 504 up
// to 1 s, anything else is final; a request whose connection closed before any answer is sent again
// (by the system tier's fetch itself for a safe request: test/support/resending-fetch.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

/** A real server on a free port running `handler`; `close()` ends its connections too. */
async function listening(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close };
}

/** What `send` threw; fails if it answered. */
async function failureOf(send: Promise<Response>): Promise<unknown> {
  try {
    await send;
  } catch (error) {
    return error;
  }
  throw new Error('it answered');
}

test('a connection closed before any answer is sent again; a refused connection is not', async () => {
  // A real server that closes every connection as a request arrives, as one whose keep-alive
  // timeout passed does under a request sent on the idle connection.
  const server = await listening((request) => request.socket.destroy());
  try {
    expect(closedBeforeAnswer(await failureOf(fetch(server.url)))).toBe(true);
  } finally {
    await server.close();
  }
  expect(closedBeforeAnswer(await failureOf(fetch(server.url)))).toBe(false);
  expect(closedBeforeAnswer(new Error('other'))).toBe(false);
});

test('a safe request whose connection closed before any answer is sent once more; a write, a Request object or a second close is not', async () => {
  const send = resendingSafeRequests(fetch);
  // A real server that closes the connection of the first request of each exchange before
  // answering it, and answers the others.
  let received = 0;
  let closeNext = false;
  const closingFirst = await listening((request, response) => {
    received += 1;
    if (closeNext) request.socket.destroy();
    else response.end('answered');
    closeNext = false;
  });
  /** How many requests the server received while `exchange` ran. */
  const receivedDuring = async (exchange: () => Promise<unknown>) => {
    const before = received;
    closeNext = true;
    await exchange();
    return received - before;
  };
  try {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      expect(await receivedDuring(async () => expect((await send(closingFirst.url, { method })).status).toBe(200))).toBe(2);
    }
    expect(await receivedDuring(async () => expect(await (await send(new URL(closingFirst.url))).text()).toBe('answered'))).toBe(2);
    expect(
      await receivedDuring(async () => expect(closedBeforeAnswer(await failureOf(send(new Request(closingFirst.url))))).toBe(true)),
    ).toBe(1);
    const post = () => failureOf(send(closingFirst.url, { method: 'POST', body: 'x' }));
    expect(await receivedDuring(async () => expect(closedBeforeAnswer(await post())).toBe(true))).toBe(1);
  } finally {
    await closingFirst.close();
  }
  // A server that closes every connection: the one resend gets no answer either, and says so.
  let closed = 0;
  const closing = await listening((request) => {
    closed += 1;
    request.socket.destroy();
  });
  try {
    expect(closedBeforeAnswer(await failureOf(send(closing.url)))).toBe(true);
    expect(closed).toBe(2);
  } finally {
    await closing.close();
  }
});
