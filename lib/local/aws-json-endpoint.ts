// A loopback HTTP endpoint speaking the AWS JSON protocols (awsJson1_0 for SQS, awsJson1_1 for
// KMS and Secrets Manager): POST / with `X-Amz-Target: <Service>.<Operation>` and a JSON body,
// answered with JSON or an error `{"__type": ..., "message": ...}`. The functions reach it through
// the SDK's own service-specific endpoint variables (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_KMS,
// AWS_ENDPOINT_URL_SECRETS_MANAGER), so their code path is the one that runs in Lambda.
// As DynamoDB Local does for the run (lib/local/dynamodb-local.ts), a stand-in answers only the
// run's own access key id, the one SigV4's Authorization header names (`Credential=<id>/...`):
// other local users of the machine cannot queue a message the API would sign with a partner's
// secret, nor make KMS decrypt one. The signature itself is not checked (the key id is the secret
// here, as for DynamoDB Local). A request is refused before its body is read when it is unsigned,
// names another key id or declares a body over the service's bound, and reading stops at that
// bound: no request can make a stand-in hold more than the bound in memory.
// https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html
// https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-signing-elements.html
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An AWS error answer: its `__type`, message, HTTP status and, for SQS, its query-protocol code. */
export class AwsJsonError extends Error {
  readonly type: string;
  readonly status: number;
  /** SQS's `x-amzn-query-error` code (AWS query compatibility), when the service sends one. */
  readonly queryCode: string | undefined;
  constructor(type: string, message: string, status = 400, queryCode?: string) {
    super(message);
    this.type = type;
    this.status = status;
    this.queryCode = queryCode;
  }
}

/** A string member of a request, or '' (the SDK sends strings; anything else is not a usable value). */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export type AwsJsonOperations = Record<string, (input: Record<string, unknown>) => unknown>;

export interface AwsJsonService {
  /** For messages: `SQS`, `KMS`, `Secrets Manager`. */
  name: string;
  contentType: string;
  /** The run's access key id: the only one answered. */
  accessKeyId: string;
  /** The service's answer to a request without SigV4 credentials. */
  unsigned: () => AwsJsonError;
  /** The service's answer to a request signed with another access key id. */
  foreignKey: () => AwsJsonError;
  /** The largest request body the service accepts; a larger one is refused unread (413). */
  maxRequestBytes: number;
  /** 0 or unset: any free port. */
  port?: number;
  operations: AwsJsonOperations;
}

export interface AwsJsonEndpoint {
  url: string;
  close(): Promise<void>;
}

/** The access key id SigV4's Authorization header names, if any. */
export function signedKeyId(authorization: string | undefined): string | undefined {
  return /^AWS4-HMAC-SHA256 .*Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];
}

function answer(response: ServerResponse, service: AwsJsonService, status: number, body: unknown, error?: AwsJsonError): void {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': service.contentType,
    'Content-Length': Buffer.byteLength(json),
    'x-amzn-RequestId': randomUUID(),
    ...(error?.queryCode ? { 'x-amzn-query-error': `${error.queryCode};Sender` } : {}),
  });
  response.end(json);
}

function fail(response: ServerResponse, service: AwsJsonService, error: AwsJsonError): void {
  answer(response, service, error.status, { __type: error.type, message: error.message }, error);
}

/** How long a refused request's connection stays open for the client to read the answer. */
const LINGER_MS = 1000;

/**
 * Refuses a request whose body is not (or no longer) read: the answer, then, as nginx's lingering
 * close does, what the client still sends is dropped unread for a moment, so that it can read the
 * answer (a close with unread data resets the connection, and the client may lose the answer),
 * and the connection is closed.
 */
function refuseUnread(request: IncomingMessage, response: ServerResponse, service: AwsJsonService, error: AwsJsonError): void {
  fail(response, service, error);
  request.on('data', () => undefined);
  const timer = setTimeout(() => request.destroy(), LINGER_MS);
  timer.unref();
  request.once('close', () => clearTimeout(timer));
}

function tooLarge(service: AwsJsonService): AwsJsonError {
  return new AwsJsonError(
    'RequestEntityTooLarge',
    `The request body exceeds the ${service.maxRequestBytes} bytes ${service.name} accepts.`,
    413,
  );
}

/** The body, or undefined once it passes the service's bound (what arrives after that is not kept). */
function boundedBody(request: IncomingMessage, service: AwsJsonService): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= service.maxRequestBytes) return void chunks.push(chunk);
      request.off('data', keep);
      chunks.length = 0;
      resolve(undefined);
    };
    request.on('data', keep);
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

/** The operation's answer to the request, or the refusal: an AwsJsonError when the request is read, else undefined (refused unread). */
async function outcome(request: IncomingMessage, response: ServerResponse, service: AwsJsonService): Promise<unknown> {
  const keyId = signedKeyId(request.headers.authorization);
  const refusal =
    keyId === undefined
      ? service.unsigned()
      : keyId !== service.accessKeyId
        ? service.foreignKey()
        : Number(request.headers['content-length'] ?? 0) > service.maxRequestBytes
          ? tooLarge(service)
          : undefined;
  const body = refusal ? undefined : await boundedBody(request, service);
  if (body === undefined) {
    refuseUnread(request, response, service, refusal ?? tooLarge(service));
    return undefined;
  }
  const target = String(request.headers['x-amz-target'] ?? '');
  const operation = request.method === 'POST' ? service.operations[target.slice(target.indexOf('.') + 1)] : undefined;
  if (!operation) return new AwsJsonError('UnknownOperationException', `${target} is not served by the local stand-in`);
  let input: Record<string, unknown>;
  try {
    input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  } catch {
    return new AwsJsonError('SerializationException', 'The request body is not JSON.');
  }
  try {
    return (await operation(input)) ?? {};
  } catch (error) {
    return error instanceof AwsJsonError ? error : new AwsJsonError('InternalFailure', (error as Error).message, 500);
  }
}

async function handle(request: IncomingMessage, response: ServerResponse, service: AwsJsonService): Promise<void> {
  const result = await outcome(request, response, service);
  if (response.headersSent) return;
  if (result instanceof AwsJsonError) fail(response, service, result);
  else answer(response, service, 200, result);
}

/** Serves `service` on 127.0.0.1 at its port (any free one by default). */
export async function startAwsJsonEndpoint(service: AwsJsonService): Promise<AwsJsonEndpoint> {
  const server: Server = createServer((request, response) => {
    handle(request, response, service).catch(() => {
      if (!response.headersSent) fail(response, service, new AwsJsonError('InternalFailure', 'The local stand-in failed.', 500));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`The ${service.name} stand-in cannot listen on 127.0.0.1:${service.port ?? 0} (${error.code ?? error.message})`)),
    );
    server.listen(service.port ?? 0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
