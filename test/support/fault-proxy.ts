// A fault-injecting HTTP proxy in front of DynamoDB Local. Point a local API process at it
// (DYNAMODB_ENDPOINT) and the real handlers and the real AWS SDK (with its real retries and
// timeouts) see throttling, server errors, hangs and dropped connections exactly as they would
// from DynamoDB: no code seam in the service. Hand-written because it is small and must speak
// DynamoDB's JSON error protocol (`__type`, CancellationReasons), which no generic proxy does.
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type FaultKind =
  /** 400 ThrottlingException (the SDK retries it with throttling backoff). */
  | 'throttling'
  /** 400 ProvisionedThroughputExceededException. */
  | 'provisioned-throughput-exceeded'
  /** 500 InternalServerError. */
  | 'internal-server-error'
  /** 503 ServiceUnavailable. */
  | 'service-unavailable'
  /** 400 TransactionCanceledException whose reasons say ThrottlingError (not retried by the SDK). */
  | 'transaction-throttled'
  /** Never answers: the SDK's request timeout must end the call. */
  | 'hang'
  /** Closes the connection without an answer (ECONNRESET / socket hang up). */
  | 'connection-reset'
  /** Forwards the request (DynamoDB applies it), then answers 500 instead: a response lost after the write. */
  | 'lost-response'
  /** Forwards the request after `delayMs`. */
  | 'delay';

export interface FaultRule {
  fault: FaultKind;
  /** DynamoDB operation, e.g. `TransactWriteItems`; every operation when absent. */
  operation?: string;
  /** Only requests naming this table (TableName anywhere in the body). */
  table?: string;
  /** How many matching requests to fault; every one when absent. */
  times?: number;
  /** How many matching requests to let through before faulting (to stop a long write part-way). */
  after?: number;
  delayMs?: number;
}

export interface FaultProxyStats {
  forwarded: number;
  /** Faults injected, by kind. */
  injected: Partial<Record<FaultKind, number>>;
  /** Requests seen, by DynamoDB operation. */
  operations: Record<string, number>;
}

export interface FaultProxy {
  endpoint: string;
  inject(rule: FaultRule): void;
  /** Removes every rule and releases requests held by `hang`. */
  clear(): void;
  stats(): FaultProxyStats;
  close(): Promise<void>;
}

const ERRORS: Record<Exclude<FaultKind, 'hang' | 'connection-reset' | 'lost-response' | 'delay'>, { status: number; body: object }> = {
  throttling: {
    status: 400,
    body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  },
  'provisioned-throughput-exceeded': {
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
      message: 'The level of configured provisioned throughput for the table was exceeded.',
    },
  },
  'internal-server-error': {
    status: 500,
    body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
  },
  'service-unavailable': {
    status: 503,
    body: { __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable', message: 'Service unavailable' },
  },
  'transaction-throttled': {
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError]',
      CancellationReasons: [{ Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity of your table or index.' }],
    },
  },
};

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let rules: (FaultRule & { remaining: number; passing: number })[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const stats: FaultProxyStats = { forwarded: 0, injected: {}, operations: {} };

  function matchingRule(operation: string, body: string) {
    const rule = rules.find(
      (candidate) =>
        candidate.remaining > 0 &&
        (!candidate.operation || candidate.operation === operation) &&
        (!candidate.table || body.includes(`"TableName":"${candidate.table}"`) || body.includes(`"${candidate.table}":`)),
    );
    if (rule && rule.passing > 0) {
      rule.passing -= 1;
      return undefined;
    }
    if (rule) rule.remaining -= 1;
    return rule;
  }

  function forward(request: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
    stats.forwarded += 1;
    return new Promise((resolve, reject) => {
      const upstream = httpRequest(
        { host: targetUrl.hostname, port: targetUrl.port, method: request.method, path: request.url, headers: request.headers, agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) }));
          response.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }

  function answerError(response: ServerResponse, kind: keyof typeof ERRORS) {
    const { status, body } = ERRORS[kind];
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': 'application/x-amz-json-1.0',
      'Content-Length': Buffer.byteLength(text),
      'x-amzn-RequestId': `fault-${Date.now()}`,
    });
    response.end(text);
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    stats.operations[operation] = (stats.operations[operation] ?? 0) + 1;
    const rule = matchingRule(operation, body.toString('utf8'));
    if (rule) stats.injected[rule.fault] = (stats.injected[rule.fault] ?? 0) + 1;

    const fault = rule?.fault;
    switch (fault) {
      case 'hang':
        held.add(response);
        response.on('close', () => held.delete(response));
        return;
      case 'connection-reset':
        request.socket.destroy();
        return;
      case 'lost-response':
        await forward(request, body);
        answerError(response, 'internal-server-error');
        return;
      case 'delay':
        await new Promise((resolve) => setTimeout(resolve, rule?.delayMs ?? 1000));
        break;
      case undefined:
        break;
      default:
        answerError(response, fault);
        return;
    }
    const upstream = await forward(request, body);
    response.writeHead(upstream.status, upstream.headers);
    response.end(upstream.body);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject: (rule) => rules.push({ ...rule, remaining: rule.times ?? Number.POSITIVE_INFINITY, passing: rule.after ?? 0 }),
    clear: () => {
      rules = [];
      for (const response of held) response.destroy();
      held.clear();
    },
    stats: () => structuredClone(stats),
    close: async () => {
      rules = [];
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
