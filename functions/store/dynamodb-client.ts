// One DynamoDB Document client per Lambda container, built on first use.
// The endpoint comes from the SDK's own AWS_ENDPOINT_URL_DYNAMODB variable, which the local API
// sets to DynamoDB Local: no code path differs between Lambda and a laptop.
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Timeouts sit below the 10 s Lambda timeout: 3 attempts (SDK standard retry mode, exponential
 * backoff with jitter) of at most 2 s each plus backoff finish in about 7 s, so a stuck DynamoDB
 * call ends as a 503 problem instead of a Lambda timeout.
 */
export const DYNAMODB_CLIENT_SETTINGS = {
  maxAttempts: 3,
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 2_000,
} as const;

let documentClient: DynamoDBDocumentClient | undefined;

export function getDocumentClient(): DynamoDBDocumentClient {
  documentClient ??= createDocumentClient();
  return documentClient;
}

/** The configuration of the functions' DynamoDB client. */
export function dynamoDbClientConfig(): DynamoDBClientConfig {
  return {
    maxAttempts: DYNAMODB_CLIENT_SETTINGS.maxAttempts,
    // Stated, not left to AWS_RETRY_MODE or a config file: the bundles leave adaptive retry out.
    retryMode: 'standard',
    requestHandler: {
      connectionTimeout: DYNAMODB_CLIENT_SETTINGS.connectionTimeoutMs,
      requestTimeout: DYNAMODB_CLIENT_SETTINGS.requestTimeoutMs,
      // Without this, @smithy/node-http-handler only logs a warning when requestTimeout passes
      // and keeps waiting: a hung call would last until the Lambda timeout.
      throwOnRequestTimeout: true,
    },
  };
}

export function createDocumentClient(client?: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client ?? new DynamoDBClient(dynamoDbClientConfig()), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** Tests and the benchmark swap in a client with fault injection or capacity accounting. */
export function setDocumentClient(client: DynamoDBDocumentClient | undefined): void {
  documentClient = client;
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}
