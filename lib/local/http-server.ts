// The local API's HTTP/1.1 server, as strict as the deployed edge: what Node's parser refuses, a
// request without a (single, valid) Host, and a transfer coding other than chunked each get an
// application/problem+json answer, never an empty one; and a refusal never takes the place of
// the answer to a request that was already executed on the same connection (pipelining).
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { problemBody, type ProblemKind } from '../../functions/events/problems.ts';
import { GATEWAY_RESPONSE_HEADERS } from '../../functions/http/gateway-responses.ts';
import { headerLines } from '../../functions/http/header-lookup.ts';

export interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What the access log says of a request: never headers (Authorization), query strings or bodies. */
export interface AccessLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** The authorizer's principal, when the request got that far. */
  user?: string;
}

/**
 * A problem for what Node's HTTP parser or the gateway refuses before any route is known, from the
 * catalogue (FRONT_END_KINDS in functions/events/problems.ts): its type is under the API's problem
 * namespace like every other answer's.
 */
export function plainProblem(kind: ProblemKind, detail: string): Answer {
  const body = problemBody(kind, detail);
  return { statusCode: body.status, headers: { ...GATEWAY_RESPONSE_HEADERS }, body };
}

type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/**
 * The start of the request the parser failed on. `rawPacket` is the whole chunk read, which may
 * begin with earlier, valid requests (pipelining): reading it from the start, a stray byte after
 * a POST was reported as "the method POST is not implemented".
 */
function failedRequest(error: ParserError): string {
  const text = error.rawPacket?.toString('latin1') ?? '';
  const failedAt = Math.min(error.bytesParsed ?? 0, text.length);
  const boundary = text.lastIndexOf('\r\n\r\n', Math.max(0, failedAt - 1));
  const start = boundary >= 0 && boundary + 4 <= failedAt ? boundary + 4 : 0;
  return text.slice(start, start + 256);
}

/** Parser errors Node reports through `clientError`, as status and detail. */
function parserProblem(error: ParserError): Answer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return plainProblem('request-headers-too-large', 'The request line and headers exceed 16 KB');
    case 'HPE_HEADERS_TIMEOUT':
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return plainProblem('request-timeout', 'The request did not arrive in time');
    case 'HPE_INVALID_METHOD': {
      const method = /^[A-Z]+(?= )/.exec(failedRequest(error))?.[0];
      return method
        ? plainProblem('not-implemented', `The method ${method} is not implemented by this API`)
        : plainProblem(
            'malformed-request',
            'The request method is not valid (methods are case-sensitive: GET, POST, PATCH, DELETE, OPTIONS)',
          );
    }
    default:
      return plainProblem('malformed-request', 'The request is not valid HTTP/1.1 (request line, header syntax or message framing)');
  }
}

/** Writes a whole response to a socket the HTTP server has given up on, then closes it. */
export function writeRawAnswer(socket: Duplex, answer: Answer): void {
  const body = JSON.stringify(answer.body);
  const headers = Object.entries({ ...answer.headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? ''}\r\n${headers}\r\n${body}`);
}

/** uri-host [ ":" port ] (RFC 9112 §3.2, RFC 3986 §3.2.2): an IP literal or a reg-name. */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::[0-9]*)?$/;

/**
 * What a strict HTTP/1.1 server refuses before it reads the body or runs anything, or undefined:
 * RFC 9112 §3.2 (400 for an HTTP/1.1 request without Host, with more than one, or an invalid one)
 * and §6.1 (a transfer coding the server does not understand: 501 — allowed here because nothing
 * has been executed; Node's parser itself decodes only a final `chunked`, so `gzip, chunked`
 * would otherwise reach the handler as if the body were not gzip-coded).
 */
export function framingProblem(request: IncomingMessage): Answer | undefined {
  const hosts = headerLines(request.rawHeaders, 'host');
  if (hosts.length === 0 && request.httpVersion !== '1.0')
    return plainProblem('malformed-request', 'An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2)');
  if (hosts.length > 1)
    return plainProblem('malformed-request', `The request carries ${hosts.length} Host headers; exactly one is allowed (RFC 9112 §3.2)`);
  if (hosts.length === 1 && !HOST_VALUE.test(hosts[0] as string))
    return plainProblem('malformed-request', 'The Host header is not a host name or address with an optional port');
  const codings = headerLines(request.rawHeaders, 'transfer-encoding')
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase());
  const unknown = codings.filter((coding) => coding !== 'chunked');
  if (unknown.length > 0)
    return plainProblem('not-implemented', `The transfer coding ${unknown.join(', ')} is not implemented; only chunked is (RFC 9112 §6.1)`);
  if (codings.length > 1) return plainProblem('malformed-request', 'chunked may be applied only once (RFC 9112 §7.1)');
  return undefined;
}

/** Per connection: requests whose answers are not finished, a refusal waiting for them, and the request whose body is being read. */
interface ConnectionState {
  inFlight: number;
  pendingRefusal?: () => void;
  reading?: { request: IncomingMessage; response: ServerResponse };
}

/** The code of the error a request emits when the parser fails inside its body (a chunk size `zz`). */
export const MALFORMED_BODY = 'MALFORMED_BODY';
const connections = new WeakMap<Duplex, ConnectionState>();

function connectionState(socket: Duplex): ConnectionState {
  let state = connections.get(socket);
  if (!state) connections.set(socket, (state = { inFlight: 0 }));
  return state;
}

/**
 * Requests Node's parser refuses (oversized or malformed, or garbage after a complete request on
 * a kept-alive connection) get a problem, not an empty answer. When earlier requests on the
 * connection are still being answered, the problem waits for their answers and then closes the
 * connection: a request that was executed always gets its own answer.
 */
function answerClientError(error: ParserError, socket: Duplex, accessLog?: (entry: AccessLogEntry) => void) {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refuse = () => {
    if (!socket.writable) return void socket.destroy();
    const answer = parserProblem(error);
    writeRawAnswer(socket, answer);
    const [method = '', target] = failedRequest(error).split('\r\n')[0]?.split(' ') ?? [];
    accessLog?.({
      method: /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}$/.test(method) ? method : '-',
      path: logPath(target),
      status: answer.statusCode,
      durationMs: 0,
    });
  };
  const state = connectionState(socket);
  if (state.reading && !state.reading.request.complete) {
    // The parser failed inside the body of the request being answered (RFC 9112 §7.1: a chunk
    // size that is not hex): that request is answered 400 through its own response, which then
    // closes the connection, instead of waiting forever for a body end that never comes.
    const { request, response } = state.reading;
    state.reading = undefined;
    response.shouldKeepAlive = false;
    // Nobody reads this body (the request is answered without it: starting up, throttled, a MOCK
    // answer): emitting would be an unhandled 'error' that ends the process. Its answer is the
    // request's own; then the connection, whose framing is lost, closes.
    if (request.listenerCount('error') === 0) {
      if (response.writableFinished) socket.destroy();
      else response.once('finish', () => socket.destroy());
      return;
    }
    request.emit('error', Object.assign(new Error('The request body is not valid HTTP/1.1 message framing'), { code: MALFORMED_BODY }));
    return;
  }
  if (state.inFlight > 0) state.pendingRefusal = refuse;
  else refuse();
}

/** Counts a request as in flight on its connection until its answer is finished (or abandoned). */
function trackInFlight(request: IncomingMessage, response: ServerResponse) {
  const state = connectionState(request.socket);
  state.inFlight++;
  if (!request.complete) {
    state.reading = { request, response };
    const done = () => {
      if (state.reading?.request === request) state.reading = undefined;
    };
    request.once('end', done);
    response.once('close', done);
  }
  response.once('close', () => {
    state.inFlight--;
    if (state.inFlight === 0 && state.pendingRefusal) {
      const refuse = state.pendingRefusal;
      state.pendingRefusal = undefined;
      refuse();
    }
  });
}

function startingUp(_request: IncomingMessage, response: ServerResponse) {
  const { statusCode, headers, body } = plainProblem('service-unavailable', 'The local API is starting; retry in a moment');
  response.writeHead(statusCode, { ...headers, 'Retry-After': '1' });
  response.end(JSON.stringify(body));
}

/**
 * Binds 127.0.0.1:`port` and answers 503 until serve() takes over: taking the port first makes a
 * busy port fail fast, before DynamoDB Local starts.
 */
export async function listenOnLoopback(port: number): Promise<Server> {
  // requireHostHeader off: Node's own check answers 400 with an empty body; framingProblem()
  // answers the same case with a problem.
  const server = createServer({ requireHostHeader: false });
  server.on('request', trackInFlight);
  server.on('request', startingUp);
  server.on('clientError', answerClientError);
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolvePromise();
    });
  });
  return server;
}

/** Replaces the start-up answers with `onRequest`, behind the strict framing checks. */
export function serve(
  server: Server,
  onRequest: (request: IncomingMessage, response: ServerResponse) => void,
  accessLog: (entry: AccessLogEntry) => void,
): void {
  server.removeListener('request', startingUp);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const refused = framingProblem(request);
    if (!refused) {
      onRequest(request, response);
      return;
    }
    // The body is not read (its framing is what is refused): the connection is closed after the answer.
    response.shouldKeepAlive = false;
    const body = JSON.stringify(refused.body);
    response.writeHead(refused.statusCode, { ...refused.headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' });
    response.end(body);
    accessLog({ method: request.method ?? '', path: logPath(request.url), status: refused.statusCode, durationMs: 0 });
  });
  server.removeListener('clientError', answerClientError);
  server.on('clientError', (error: ParserError, socket: Duplex) => answerClientError(error, socket, accessLog));
  // This is no proxy: CONNECT (which Node hands over as a raw socket) is not implemented.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const answer = plainProblem('not-implemented', 'This server is not a proxy: CONNECT is not implemented');
    writeRawAnswer(socket, answer);
    accessLog({ method: 'CONNECT', path: logPath(request.url), status: answer.statusCode, durationMs: 0 });
  });
  // Keep-alive: advertise 5 s (`Keep-Alive: timeout=5`) but close an idle connection only 10 s
  // later. A client that reuses a pooled connection just as the server closes it gets a reset
  // instead of an answer (fetch: "other side closed", nodejs/undici#3141); fetch closes its idle
  // connections 1 s before the advertised timeout, so on a busy machine, where its timers fire
  // late, a 2 s margin (Node's default 1 s buffer) is not enough. Seen in a loaded test run; the
  // margin is now 11 s. Stopping never waits for idle connections: close() ends them all
  // (local-api-gateway.ts).
  server.keepAliveTimeout = 5_000;
  server.keepAliveTimeoutBuffer = 10_000;
}

/**
 * Stops accepting connections and waits, at most `limitMs`, until the requests under way have
 * been answered (idle keep-alive connections are closed as they become idle).
 */
export async function drain(server: Server, limitMs: number): Promise<void> {
  const closed = new Promise<'closed'>((resolve) => server.close(() => resolve('closed')));
  for (const deadline = performance.now() + limitMs; performance.now() < deadline;) {
    server.closeIdleConnections();
    if ((await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 50))])) === 'closed') return;
  }
}

/**
 * The path of a target for the access log, bounded: never the query string (it may carry anything)
 * nor, for an absolute-form target (`http://user:password@host/...`), its scheme, userinfo or host.
 */
export function logPath(target: string | undefined): string {
  let path = '-';
  try {
    if (target?.startsWith('/')) path = new URL(`http://gateway.invalid${target}`).pathname;
    else if (target && /^https?:\/\//i.test(target)) path = new URL(target).pathname;
  } catch {
    // not a URL: logged as '-'
  }
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
