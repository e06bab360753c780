// A minimal local stand-in for AWS Secrets Manager: GetSecretValue only, over the JSON 1.1
// protocol the SDK speaks (POST /, `X-Amz-Target: secretsmanager.GetSecretValue`), on loopback.
// The local run points the functions at it with the SDK's service-specific endpoint variable
// (AWS_ENDPOINT_URL_SECRETS_MANAGER), as it points them at DynamoDB Local with
// AWS_ENDPOINT_URL_DYNAMODB: the authorizer's code path is the deployed one
// (functions/auth/credential-keys.ts). Each secret is a file, read at every call.
// Hand-written: no library serves one Secrets Manager action locally without a whole emulator
// (LocalStack, moto), and this is the one the functions call.
//
// GetSecretValue as AWS documents it
// (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html): the
// request's `SecretId` is the secret's name or ARN; the answer carries ARN, Name, VersionId,
// SecretString, VersionStages and CreatedDate; an unknown secret is a 400
// `ResourceNotFoundException`. Like DynamoDB Local here (lib/local/dynamodb-local.ts), it answers
// only the run's own access key id: other local users of the machine cannot read the key.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { LOCAL_REGION } from './dynamodb-local.ts';

/** What the local run calls the credential keys' secret (CREDENTIAL_KEYS_SECRET of the functions). */
export const LOCAL_CREDENTIAL_KEYS_SECRET = 'museum-credential-keys';
/** The account id of the local ARNs (not a real account). */
const LOCAL_ACCOUNT = '000000000000';
/** A request body larger than this is refused (a GetSecretValue request is well under 1 KB). */
const MAX_REQUEST_BYTES = 64 * 1024;

export interface SecretsManagerLocal {
  endpoint: string;
  close(): Promise<void>;
}

function secretArn(name: string): string {
  return `arn:aws:secretsmanager:${LOCAL_REGION}:${LOCAL_ACCOUNT}:secret:${name}`;
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

/** A JSON 1.1 error: HTTP 400 with the error's type in `__type`. */
function failure(type: string, message: string): [number, unknown] {
  return [400, { __type: type, message, Message: message }];
}

async function body(request: IncomingMessage): Promise<string | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Serves `secrets` (name -> file) on 127.0.0.1, to requests signed with `accessKeyId` (the run's
 * DynamoDB Local key id, which the functions use as their access key: local-environment.ts).
 */
export async function startSecretsManagerLocal(options: {
  secrets: Record<string, string>;
  accessKeyId: string;
}): Promise<SecretsManagerLocal> {
  const byId = new Map<string, { name: string; file: string }>();
  for (const [name, file] of Object.entries(options.secrets)) {
    byId.set(name, { name, file });
    byId.set(secretArn(name), { name, file });
  }
  /** The answer to one request: status and JSON body. */
  const handle = async (request: IncomingMessage): Promise<[number, unknown]> => {
    const text = await body(request);
    if (request.method !== 'POST' || request.url !== '/' || text === undefined)
      return failure('InvalidRequestException', 'Not a Secrets Manager request.');
    // SigV4's Authorization header names the access key id: `Credential=<id>/<date>/...`.
    const keyId = /Credential=([^/,\s]+)\//.exec(request.headers.authorization ?? '')?.[1];
    if (keyId !== options.accessKeyId)
      return failure('UnrecognizedClientException', 'The security token included in the request is invalid.');
    const target = request.headers['x-amz-target'];
    if (target !== 'secretsmanager.GetSecretValue') return failure('UnknownOperationException', `${String(target)} is not served locally.`);
    let secretId: unknown;
    try {
      secretId = (JSON.parse(text) as { SecretId?: unknown }).SecretId;
    } catch {
      return failure('SerializationException', 'The request body is not JSON.');
    }
    const secret = typeof secretId === 'string' ? byId.get(secretId) : undefined;
    if (!secret) return failure('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    let value: string;
    try {
      value = await readFile(secret.file, 'utf8');
    } catch {
      return failure('ResourceNotFoundException', "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT");
    }
    const digest = createHash('sha256').update(value).digest('hex');
    return [
      200,
      {
        ARN: secretArn(secret.name),
        Name: secret.name,
        // A version id per content, shaped like AWS's (a UUID): it changes when the file does.
        VersionId: [digest.slice(0, 8), digest.slice(8, 12), digest.slice(12, 16), digest.slice(16, 20), digest.slice(20, 32)].join('-'),
        SecretString: value,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Math.floor(Date.now() / 1000),
      },
    ];
  };
  const server = createServer((request, response) => {
    handle(request).then(
      ([status, json]) => answer(response, status, json),
      () => answer(response, 500, { __type: 'InternalServiceError', message: 'The local stand-in failed.' }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
