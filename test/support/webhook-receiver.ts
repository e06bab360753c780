// Loopback webhook receivers for the end-to-end tests: each records every request with the time it
// arrived, and answers as the test says (a status, after a delay, or never).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request had arrived whole. */
  at: number;
  /** The `webhook-id` header: the change's id. */
  id: string;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  server: Server;
  close(): Promise<void>;
}

/**
 * A receiver that answers request n (1-based) with `answer(n)`: a status, `{ status, afterMs }`,
 * or `'never'` (the connection is held open until the receiver closes).
 */
export async function receiver(
  answer: (n: number) => number | { status: number; afterMs: number } | 'never' = () => 204,
): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        id: String(request.headers['webhook-id']),
      });
      const reply = answer(received.length);
      if (reply === 'never') return;
      if (typeof reply === 'number') response.writeHead(reply).end();
      else setTimeout(() => response.writeHead(reply.status).end(), reply.afterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `read` every 100 ms until it returns a value; throws after `timeoutMs`. */
export async function until<T>(read: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await read();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s`);
}
