// A fault-injecting HTTP proxy in front of DynamoDB Local. Point a local API process at it
// (DYNAMODB_ENDPOINT) and the real handlers and the real AWS SDK (with its real retries and
// timeouts) see throttling, server errors, hangs and dropped connections exactly as they would
// from DynamoDB: no code seam in the service. Hand-written because it is small and must speak
// DynamoDB's JSON error protocol (`__type`, CancellationReasons), which no generic proxy does.
//
// It also makes DynamoDB Local behave as DynamoDB does where Local is kinder (`behaviour`):
// - index lag: "All reads from GSIs and streams are eventually consistent"
//   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
//   A Query on an index answers as the table was `indexLagMs` ago: an item written since is not
//   yet there, or still there as it was (its image before the first write within the lag).
// - cancellations: DynamoDB cancels a transaction that conflicts with another one on the same item
//   (TransactionCanceledException, reason TransactionConflict) and throttles
//   (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html,
//   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html);
//   Local ran 80 of 80 concurrent transactions on one item. A share `cancelShare` of
//   TransactWriteItems is cancelled (TransactionConflict on one item, or ThrottlingError), and the
//   same share of conditional single-item writes gets TransactionConflictException or
//   ProvisionedThroughputExceededException, before reaching Local: nothing is applied.
// An HTTP proxy rather than an SDK layer, so that the local API's handlers, in their own
// process, go through it exactly as in-process store tests do. In bench/support/ because the tests
// and the benchmarks both use it, and bench/ imports nothing from test/ (docs/DEVELOPMENT.md).
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { callingFunction, itemAccesses, partitionShape, type RecordedAccess } from './granted-access.ts';

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
  /** Writes cancelled or throttled by the behaviour, and index items shown lagging. */
  cancelled: number;
  lagged: number;
  /** Faults injected, by kind. */
  injected: Partial<Record<FaultKind, number>>;
  /** Requests seen, by DynamoDB operation. */
  operations: Record<string, number>;
}

/** How DynamoDB behaves beyond Local (see the header): index lag and a share of cancelled writes. */
export interface DynamoDbBehaviour {
  indexLagMs?: number;
  cancelShare?: number;
}

/** The behaviour asked for by MUSEUM_TEST_INDEX_LAG_MS and MUSEUM_TEST_CANCEL_SHARE (unset: `defaults`), if any. */
export function behaviourFromEnvironment(defaults: DynamoDbBehaviour = {}): DynamoDbBehaviour | undefined {
  const indexLagMs = Number(process.env.MUSEUM_TEST_INDEX_LAG_MS ?? defaults.indexLagMs ?? 0);
  const cancelShare = Number(process.env.MUSEUM_TEST_CANCEL_SHARE ?? defaults.cancelShare ?? 0);
  return indexLagMs > 0 || cancelShare > 0 ? { indexLagMs, cancelShare } : undefined;
}

export interface FaultProxy {
  endpoint: string;
  /** Sets the DynamoDB behaviour (index lag, cancellations); `{}` turns it off. */
  behave(behaviour: DynamoDbBehaviour): void;
  inject(rule: FaultRule): void;
  /** Removes every rule and releases requests held by `hang`. */
  clear(): void;
  stats(): FaultProxyStats;
  /** What each function's requests needed IAM to allow (each access once, partitions generalised). */
  accesses(): RecordedAccess[];
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

type Attributes = Record<string, Record<string, unknown>>;
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

/** The table and key of every item a write request touches. */
function writtenKeys(operation: string, body: Record<string, unknown>): { table: string; key: Attributes }[] {
  const keyOf = (action: Record<string, unknown>) => ({
    table: String(action.TableName),
    key: (action.Key ?? pick(action.Item as Attributes)) as Attributes,
  });
  if (operation === 'TransactWriteItems') {
    return ((body.TransactItems ?? []) as Record<string, Record<string, unknown>>[]).flatMap((item) => Object.values(item).map(keyOf));
  }
  if (operation === 'BatchWriteItem') {
    return Object.entries(
      (body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Attributes }; DeleteRequest?: { Key: Attributes } }[]>,
    ).flatMap(([table, requests]) =>
      requests.map((request) => ({ table, key: request.DeleteRequest?.Key ?? pick(request.PutRequest?.Item ?? {}) })),
    );
  }
  return [keyOf(body)];
}

/** The primary key (pk, sk, or id) of an item, its attributes in a fixed order (items come back in any order). */
function pick(item: Attributes): Attributes {
  return Object.fromEntries(
    Object.entries(item)
      .filter(([name]) => name === 'pk' || name === 'sk' || name === 'id')
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

const scalar = (value: Record<string, unknown> | undefined) => (value ? String(Object.values(value)[0]) : undefined);
const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Whether `item` satisfies a key condition of the forms the service and tests send (`=`, `BETWEEN`, comparisons, `begins_with`). */
function matchesKeyCondition(item: Attributes, expression: string, names: Record<string, string>, values: Attributes): boolean {
  const name = (token: string) => names[token] ?? token;
  return expression
    .split(/\s+AND\s+/i)
    .reduce<string[]>((parts, part) => {
      // Re-join the "x BETWEEN :a AND :b" that the split above cut in two.
      const last = parts.at(-1);
      if (last && /BETWEEN\s+\S+$/i.test(last)) parts[parts.length - 1] = `${last} AND ${part}`;
      else parts.push(part);
      return parts;
    }, [])
    .every((condition) => {
      const text = condition.trim().replace(/^\((.*)\)$/, '$1');
      const begins = /^begins_with\s*\(\s*(\S+)\s*,\s*(\S+)\s*\)$/i.exec(text);
      if (begins) return (scalar(item[name(begins[1] as string)]) ?? '').startsWith(scalar(values[begins[2] as string]) ?? '\u0000');
      const between = /^(\S+)\s+BETWEEN\s+(\S+)\s+AND\s+(\S+)$/i.exec(text);
      const actual = scalar(item[name((between ?? /^(\S+)/.exec(text) ?? [])[1] as string)]);
      if (actual === undefined) return false;
      if (between)
        return (
          compareBytes(actual, scalar(values[between[2] as string]) ?? '') >= 0 &&
          compareBytes(actual, scalar(values[between[3] as string]) ?? '') <= 0
        );
      const comparison = /^(\S+)\s*(=|<=|>=|<|>)\s*(\S+)$/.exec(text);
      if (!comparison) throw new Error(`The fault proxy cannot evaluate the key condition "${text}"`);
      const order = compareBytes(actual, scalar(values[comparison[3] as string]) ?? '');
      return { '=': order === 0, '<=': order <= 0, '>=': order >= 0, '<': order < 0, '>': order > 0 }[comparison[2] as '='];
    });
}

export async function startFaultProxy(target: string, initialBehaviour: DynamoDbBehaviour = {}): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  let rules: (FaultRule & { remaining: number; passing: number })[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const stats: FaultProxyStats = { forwarded: 0, cancelled: 0, lagged: 0, injected: {}, operations: {} };
  const accesses = new Map<string, RecordedAccess>();
  let behaviour = initialBehaviour;
  /** Per item (table and key), the writes within the lag: when, and the item as it was before (undefined: absent). */
  const recentWrites = new Map<string, { at: number; before: Attributes | undefined; table: string }[]>();

  /** A request of the proxy's own to DynamoDB Local, with the caller's headers (Local checks no signature). */
  async function ownRequest(request: IncomingMessage, operation: string, body: object): Promise<Record<string, unknown>> {
    const text = Buffer.from(JSON.stringify(body));
    const headers = { ...request.headers, 'x-amz-target': `DynamoDB_20120810.${operation}`, 'content-length': String(text.length) };
    const answer = await forward({ method: 'POST', url: '/', headers }, text);
    return JSON.parse(answer.body.toString('utf8') || '{}') as Record<string, unknown>;
  }

  /** Before a write goes through: remember each item's image, so that index queries can show it for indexLagMs. */
  async function recordBeforeImages(request: IncomingMessage, operation: string, body: Record<string, unknown>): Promise<void> {
    const now = Date.now();
    for (const { table, key } of writtenKeys(operation, body)) {
      const id = `${table}\u0000${JSON.stringify(pick(key))}`;
      const history = (recentWrites.get(id) ?? []).filter((write) => now - write.at < (behaviour.indexLagMs ?? 0));
      const { Item } = await ownRequest(request, 'GetItem', { TableName: table, Key: key, ConsistentRead: true });
      recentWrites.set(id, [...history, { at: now, before: Item as Attributes | undefined, table }]);
    }
  }

  /** A Query on an index, answered as the table was indexLagMs ago: recent items removed, their earlier images put back. */
  function lagged(body: Record<string, unknown>, answer: Record<string, unknown>): Record<string, unknown> {
    const now = Date.now();
    const lagMs = behaviour.indexLagMs ?? 0;
    const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (body.ExpressionAttributeValues ?? {}) as Attributes;
    const condition = typeof body.KeyConditionExpression === 'string' ? body.KeyConditionExpression : '';
    const sortKey =
      /\b(gsi\d?sk)\b/.exec(condition)?.[1] ?? /(#\w+)\s*(?:BETWEEN|>=|<=|>|<|=)/.exec(condition.split(/\s+AND\s+/i)[1] ?? '')?.[1];
    const sortName = sortKey ? (names[sortKey] ?? sortKey) : undefined;
    const lastKey = answer.LastEvaluatedKey as Attributes | undefined;
    const keyText = (item: Attributes) => JSON.stringify(pick(item));
    const lagging = new Map<string, Attributes | undefined>();
    for (const [id, history] of recentWrites) {
      const within = history.filter((write) => now - write.at < lagMs);
      if (within.length === 0) {
        recentWrites.delete(id);
        continue;
      }
      if ((within[0] as { table: string }).table !== body.TableName) continue;
      lagging.set(id.slice(id.indexOf('\u0000') + 1), (within[0] as { before: Attributes | undefined }).before);
    }
    if (lagging.size === 0) return answer;
    const items = ((answer.Items ?? []) as Attributes[]).filter((item) => !lagging.has(keyText(item)));
    stats.lagged += ((answer.Items ?? []) as Attributes[]).length - items.length;
    for (const before of lagging.values()) {
      if (!before || !matchesKeyCondition(before, condition, names, values)) continue;
      // Within this page only: past its last key, the next page will show it.
      if (lastKey && sortName && compareBytes(scalar(before[sortName]) ?? '', scalar(lastKey[sortName]) ?? '') > 0) continue;
      items.push(before);
      stats.lagged += 1;
    }
    if (sortName)
      items.sort((a, b) => compareBytes(scalar(a[sortName]) ?? '', scalar(b[sortName]) ?? '') * (body.ScanIndexForward === false ? -1 : 1));
    return { ...answer, Items: items, Count: items.length };
  }

  /** A cancellation DynamoDB could have answered this write with, for a share cancelShare of them (undefined: none). */
  function cancellation(operation: string, body: Record<string, unknown>): { status: number; body: object } | undefined {
    if (Math.random() >= (behaviour.cancelShare ?? 0)) return undefined;
    const throttled = Math.random() < 0.3;
    if (operation === 'TransactWriteItems') {
      const count = ((body.TransactItems ?? []) as unknown[]).length;
      const victim = Math.floor(Math.random() * count);
      const reasons = Array.from({ length: count }, (_, i) =>
        i !== victim
          ? { Code: 'None' }
          : throttled
            ? { Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity of your table or index.' }
            : { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
      );
      return {
        status: 400,
        body: {
          __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
          message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
          CancellationReasons: reasons,
        },
      };
    }
    if (!['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation) || body.ConditionExpression === undefined) return undefined;
    return throttled
      ? ERRORS['provisioned-throughput-exceeded']
      : {
          status: 400,
          body: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' },
        };
  }

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

  function forward(
    request: Pick<IncomingMessage, 'method' | 'url' | 'headers'>,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
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

  function answerError(response: ServerResponse, kind: keyof typeof ERRORS | { status: number; body: object }) {
    const { status, body } = typeof kind === 'string' ? ERRORS[kind] : kind;
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': 'application/x-amz-json-1.0',
      'Content-Length': Buffer.byteLength(text),
      'x-amzn-RequestId': `fault-${Date.now()}`,
    });
    response.end(text);
  }

  /** Records what the request needs IAM to allow, when a function's environment sent it (its session token). */
  function recordAccesses(request: IncomingMessage, operation: string, body: Buffer): void {
    const token = request.headers['x-amz-security-token'];
    const functionName = callingFunction(Array.isArray(token) ? token.at(-1) : token);
    if (!functionName) return;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const access of itemAccesses(operation, parsed)) {
      const recorded = { functionName, access: { ...access, partition: partitionShape(access.partition) } };
      accesses.set(JSON.stringify(recorded), recorded);
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    stats.operations[operation] = (stats.operations[operation] ?? 0) + 1;
    recordAccesses(request, operation, body);
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
    const parsed =
      behaviour.indexLagMs || behaviour.cancelShare ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>) : {};
    const cancelled = behaviour.cancelShare ? cancellation(operation, parsed) : undefined;
    if (cancelled) {
      stats.cancelled += 1;
      answerError(response, cancelled);
      return;
    }
    if (behaviour.indexLagMs && WRITES.has(operation)) await recordBeforeImages(request, operation, parsed);
    const upstream = await forward(request, body);
    if (behaviour.indexLagMs && operation === 'Query' && parsed.IndexName !== undefined && upstream.status === 200) {
      const text = JSON.stringify(lagged(parsed, JSON.parse(upstream.body.toString('utf8')) as Record<string, unknown>));
      response.writeHead(200, { ...upstream.headers, 'content-length': String(Buffer.byteLength(text)) });
      response.end(text);
      return;
    }
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
  // Never what keeps a process alive (the global setup starts one and does not close it).
  server.unref();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    behave: (next) => {
      behaviour = next;
      recentWrites.clear();
    },
    inject: (rule) => rules.push({ ...rule, remaining: rule.times ?? Number.POSITIVE_INFINITY, passing: rule.after ?? 0 }),
    clear: () => {
      rules = [];
      for (const response of held) response.destroy();
      held.clear();
    },
    stats: () => structuredClone(stats),
    accesses: () => [...accesses.values()],
    close: async () => {
      rules = [];
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
