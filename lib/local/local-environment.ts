// What the local API and the users CLI share: where local data lives, how to reach the
// DynamoDB Local that holds it, and the environment the handler bundles read.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_AWS_ENV, LOCAL_TABLE_NAMES, localClient, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.ts';

export const DATA_DIRECTORY = resolve(process.env.MUSEUM_DATA_DIR ?? '.data');
/** Written while `npm start` runs, so the users CLI can use the same DynamoDB Local. */
const RUNTIME_FILE = join(DATA_DIRECTORY, 'local-api.json');

export interface RunningLocalApi {
  pid: number;
  url: string;
  dynamodbEndpoint: string;
}

export async function runningLocalApi(): Promise<RunningLocalApi | undefined> {
  if (!existsSync(RUNTIME_FILE)) return undefined;
  const running = JSON.parse(readFileSync(RUNTIME_FILE, 'utf8')) as RunningLocalApi;
  const client = localClient(running.dynamodbEndpoint);
  try {
    await client.send(new ListTablesCommand({}));
    return running;
  } catch {
    return undefined; // left behind by a start that was killed
  } finally {
    client.destroy();
  }
}

export async function recordRunningLocalApi(running: RunningLocalApi): Promise<void> {
  await mkdir(DATA_DIRECTORY, { recursive: true });
  await writeFile(RUNTIME_FILE, JSON.stringify(running, null, 2));
}

export async function forgetRunningLocalApi(): Promise<void> {
  await rm(RUNTIME_FILE, { force: true });
}

/**
 * The DynamoDB endpoint to use: DYNAMODB_ENDPOINT if set, else a DynamoDB Local started here
 * (in memory when MUSEUM_IN_MEMORY=1, otherwise persisting under .data/dynamodb).
 */
export async function localDynamoDb(): Promise<{ endpoint: string; started?: DynamoDbLocal }> {
  if (process.env.DYNAMODB_ENDPOINT) return { endpoint: process.env.DYNAMODB_ENDPOINT };
  const inMemory = process.env.MUSEUM_IN_MEMORY === '1';
  const started = await startDynamoDbLocal(inMemory ? {} : { dataDirectory: join(DATA_DIRECTORY, 'dynamodb') });
  return { endpoint: started.endpoint, started };
}

export const localTableNames = {
  events: process.env.TABLE_NAME ?? LOCAL_TABLE_NAMES.events,
  idempotency: process.env.IDEMPOTENCY_TABLE_NAME ?? LOCAL_TABLE_NAMES.idempotency,
};

/** The environment variables the deployed stack gives the functions, pointed at DynamoDB Local. */
export function handlerEnvironment(endpoint: string): Record<string, string> {
  return {
    ...LOCAL_AWS_ENV,
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    TABLE_NAME: localTableNames.events,
    IDEMPOTENCY_TABLE_NAME: localTableNames.idempotency,
    MUSEUM_TIME_ZONE: process.env.MUSEUM_TIME_ZONE ?? 'UTC',
    POWERTOOLS_SERVICE_NAME: 'museum-special-events',
    POWERTOOLS_METRICS_NAMESPACE: 'MuseumSpecialEvents',
    // No CloudWatch agent reads EMF lines locally; set POWERTOOLS_METRICS_DISABLED=false to see them.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'INFO',
    CORS_ALLOWED_ORIGINS: process.env.CORS_ALLOWED_ORIGINS ?? '',
    AUTH_CACHE_TTL_SECONDS: process.env.AUTH_CACHE_TTL_SECONDS ?? '60',
  };
}
