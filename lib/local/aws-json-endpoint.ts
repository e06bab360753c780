// A loopback HTTP endpoint speaking the AWS JSON protocols (awsJson1_0 for SQS, awsJson1_1 for
// KMS): POST / with `X-Amz-Target: <Service>.<Operation>` and a JSON body, answered with JSON or
// an error `{"__type": ..., "message": ...}` with a 400. The functions reach it through the SDK's
// own service-specific endpoint variables (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_KMS), so their
// code path is the one that runs in Lambda. Requests are not signature-checked: the stand-ins
// listen on 127.0.0.1 only.
// https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html
// https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An AWS error answer: its `__type` and message. */
export class AwsJsonError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: string, message: string, status = 400) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

/** A string member of a request, or '' (the SDK sends strings; anything else is not a usable value). */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export type AwsJsonOperations = Record<string, (input: Record<string, unknown>) => unknown>;

export interface AwsJsonEndpoint {
  url: string;
  close(): Promise<void>;
}

/** Serves `operations` (by the operation part of X-Amz-Target) on 127.0.0.1 at a free port. */
export async function startAwsJsonEndpoint(contentType: string, operations: AwsJsonOperations): Promise<AwsJsonEndpoint> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const operation = operations[target.slice(target.indexOf('.') + 1)];
      let status = 200;
      let body: unknown;
      try {
        if (!operation) throw new AwsJsonError('UnknownOperationException', `${target} is not served by the local stand-in`);
        const text = Buffer.concat(chunks).toString('utf8');
        body = operation(text ? (JSON.parse(text) as Record<string, unknown>) : {}) ?? {};
      } catch (error) {
        const known = error instanceof AwsJsonError ? error : new AwsJsonError('InternalFailure', (error as Error).message, 500);
        status = known.status;
        body = { __type: known.type, message: known.message };
        response.setHeader('x-amzn-query-error', `${known.type};Sender`);
      }
      response.writeHead(status, { 'Content-Type': contentType, 'x-amzn-RequestId': crypto.randomUUID() });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
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
