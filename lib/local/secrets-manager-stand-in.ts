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
// only the run's own access key id (lib/local/aws-json-endpoint.ts): other local users of the
// machine cannot read the key.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { AwsJsonError, startAwsJsonEndpoint } from './aws-json-endpoint.ts';
import { LOCAL_REGION } from './dynamodb-local.ts';

/** What the local run calls the credential keys' secret (CREDENTIAL_KEYS_SECRET of the functions). */
export const LOCAL_CREDENTIAL_KEYS_SECRET = 'museum-credential-keys';
/** The account id of the local ARNs (not a real account). */
const LOCAL_ACCOUNT = '000000000000';
/** A request body larger than this is refused (a GetSecretValue request is well under 1 KB). */
const MAX_REQUEST_BYTES = 64 * 1024;

export interface SecretsManagerStandIn {
  endpoint: string;
  close(): Promise<void>;
}

/** Secrets Manager's answer to a request without the run's key id (as AWS answers an unknown one). */
const invalidToken = () => new AwsJsonError('UnrecognizedClientException', 'The security token included in the request is invalid.');

function secretArn(name: string): string {
  return `arn:aws:secretsmanager:${LOCAL_REGION}:${LOCAL_ACCOUNT}:secret:${name}`;
}

/**
 * Serves `secrets` (name -> file) on 127.0.0.1, to requests signed with `accessKeyId` (the run's
 * DynamoDB Local key id, which the functions use as their access key: local-environment.ts).
 */
export async function startSecretsManagerStandIn(options: {
  secrets: Record<string, string>;
  accessKeyId: string;
  /** MUSEUM_SECRETS_MANAGER_PORT; 0 or unset: any free port. */
  port?: number;
}): Promise<SecretsManagerStandIn> {
  const byId = new Map<string, { name: string; file: string }>();
  for (const [name, file] of Object.entries(options.secrets)) {
    byId.set(name, { name, file });
    byId.set(secretArn(name), { name, file });
  }
  const served = await startAwsJsonEndpoint({
    name: 'Secrets Manager',
    contentType: 'application/x-amz-json-1.1',
    accessKeyId: options.accessKeyId,
    ...(options.port ? { port: options.port } : {}),
    maxRequestBytes: MAX_REQUEST_BYTES,
    unsigned: invalidToken,
    foreignKey: invalidToken,
    operations: {
      GetSecretValue: async (input) => {
        const secret = typeof input.SecretId === 'string' ? byId.get(input.SecretId) : undefined;
        if (!secret) throw new AwsJsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        let value: string;
        try {
          value = await readFile(secret.file, 'utf8');
        } catch {
          throw new AwsJsonError(
            'ResourceNotFoundException',
            "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
          );
        }
        const digest = createHash('sha256').update(value).digest('hex');
        return {
          ARN: secretArn(secret.name),
          Name: secret.name,
          // A version id per content, shaped like AWS's (a UUID): it changes when the file does.
          VersionId: [digest.slice(0, 8), digest.slice(8, 12), digest.slice(12, 16), digest.slice(16, 20), digest.slice(20, 32)].join('-'),
          SecretString: value,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: Math.floor(Date.now() / 1000),
        };
      },
    },
  });
  return { endpoint: served.url, close: () => served.close() };
}
