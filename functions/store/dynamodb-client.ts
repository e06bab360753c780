// One DynamoDB Document client per Lambda container, built on first use.
// The endpoint comes from the SDK's own AWS_ENDPOINT_URL_DYNAMODB variable, which the local API
// sets to DynamoDB Local: no code path differs between Lambda and a laptop.
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isNeverConnected } from './store-errors.ts';

/**
 * Timeouts sit below the 10 s Lambda timeout: 3 attempts (SDK standard retry mode, exponential
 * backoff with jitter) of at most 2 s each plus backoff finish in about 7 s, so a stuck DynamoDB
 * call ends as a 503 problem instead of a Lambda timeout.
 */
export const DYNAMODB_CLIENT_SETTINGS = { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000 } as const;

let documentClient: DynamoDBDocumentClient | undefined;

export function getDocumentClient(): DynamoDBDocumentClient {
  return (documentClient ??= createDocumentClient());
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
  const base = client ?? new DynamoDBClient(dynamoDbClientConfig());
  recordAttempts(base);
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

const recorded = new WeakSet<DynamoDBClient>();

/**
 * Marks each failed call with `$neverSent`: true when every attempt (the SDK retries inside one
 * call) failed to connect, so nothing can have reached DynamoDB and a write is a plain 503, not
 * an unknown outcome. A per-attempt middleware (the deserialize step runs inside the retry loop)
 * notes an answer or any other failure; the outermost one (initialize) writes the verdict.
 * https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/middleware-stack.html
 */
function recordAttempts(client: DynamoDBClient): void {
  if (recorded.has(client)) return;
  recorded.add(client);
  const reached = new WeakSet<object>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        const response = await next(args);
        reached.add(context); // an answer came back, whatever the deserializer makes of it
        return response;
      } catch (error) {
        if (!isNeverConnected(error)) reached.add(context);
        throw error;
      }
    },
    { step: 'deserialize', name: 'museumAttemptRecorder' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (typeof error === 'object' && error !== null) Object.assign(error, { $neverSent: !reached.has(context) });
        throw error;
      }
    },
    { step: 'initialize', name: 'museumNeverSentVerdict', priority: 'high' },
  );
}
