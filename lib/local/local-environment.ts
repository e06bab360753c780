// What the local API and the users CLI share: where local data lives, the lock that keeps one
// DynamoDB Local per data directory, how to reach the DynamoDB Local that holds the data, and the
// environment the handler bundles read.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  KEY_ID_VARIABLE,
  LOCAL_REGION,
  localCredentials,
  readKeyId,
  startDynamoDbLocal,
  useKeyId,
  type DynamoDbLocal,
} from './dynamodb-local.ts';
import { LOCAL_TABLE_NAMES } from './local-tables.ts';
import { credentialKeysFileIn } from './credential-keys-file.ts';
import { LOCAL_CREDENTIAL_KEYS_SECRET } from './secrets-manager-stand-in.ts';
import { MUSEUM_SETTING_NAMES, MUSEUM_SETTINGS, museumEnvironment, type MuseumSettings } from '../../functions/events/museum-settings.ts';
import { EXAMPLE_MUSEUM } from '../openapi/json-ld-document.ts';

export const DATA_DIRECTORY = resolve(process.env.MUSEUM_DATA_DIR || '.data');
/** DynamoDB Local's files and the key id that guards them. */
export const DYNAMODB_DIRECTORY = join(DATA_DIRECTORY, 'dynamodb');

/** MUSEUM_IN_MEMORY=1 (checked at start: 1, 0 or unset). */
export function inMemory(): boolean {
  return process.env.MUSEUM_IN_MEMORY === '1';
}

/** True when a data directory is used at all (not MUSEUM_IN_MEMORY=1, not an external DYNAMODB_ENDPOINT). */
export function usesDataDirectory(): boolean {
  return !inMemory() && !process.env.DYNAMODB_ENDPOINT;
}

/** The runtime file of earlier versions (replaced by the lock); a leftover would only mislead. */
export async function removeOldRuntimeFile(): Promise<void> {
  await rm(join(DATA_DIRECTORY, 'local-api.json'), { force: true });
}

/**
 * Makes this process's local clients use the data directory's key for an endpoint it did not start
 * (the running `npm start`'s). Read only: this process does not hold the lock.
 */
export async function useDataDirectoryKey(endpoint: string): Promise<void> {
  useKeyId(endpoint, await readKeyId(DYNAMODB_DIRECTORY));
}

/**
 * The DynamoDB endpoint to use: DYNAMODB_ENDPOINT if set (its key id from MUSEUM_DYNAMODB_KEY_ID,
 * default `local`), else a DynamoDB Local started here (in a temporary directory when
 * MUSEUM_IN_MEMORY=1, otherwise persisting under the data directory). `signal` aborts its start.
 */
/** The port DynamoDB Local is to listen on (MUSEUM_DYNAMODB_PORT), or 0 for any free one. */
export function dynamoDbLocalPort(): number {
  return process.env.DYNAMODB_ENDPOINT ? 0 : Number(process.env.MUSEUM_DYNAMODB_PORT || 0);
}

/** The ports the stand-ins listen on (MUSEUM_SQS_PORT, MUSEUM_KMS_PORT, MUSEUM_SECRETS_MANAGER_PORT), 0 for any free one. */
export function standInPorts(): { sqs: number; kms: number; secretsManager: number } {
  return {
    sqs: Number(process.env.MUSEUM_SQS_PORT || 0),
    kms: Number(process.env.MUSEUM_KMS_PORT || 0),
    secretsManager: Number(process.env.MUSEUM_SECRETS_MANAGER_PORT || 0),
  };
}

export async function localDynamoDb(signal?: AbortSignal): Promise<{ endpoint: string; started?: DynamoDbLocal }> {
  if (process.env.DYNAMODB_ENDPOINT) return { endpoint: process.env.DYNAMODB_ENDPOINT };
  const port = dynamoDbLocalPort();
  const started = await startDynamoDbLocal({ ...(inMemory() ? {} : { dataDirectory: DYNAMODB_DIRECTORY }), signal, port });
  return { endpoint: started.endpoint, started };
}

export const localTableNames = {
  events: process.env.TABLE_NAME || LOCAL_TABLE_NAMES.events,
  idempotency: process.env.IDEMPOTENCY_TABLE_NAME || LOCAL_TABLE_NAMES.idempotency,
};

/**
 * The credential keys of a local run (lib/local/credential-keys-file.ts): in the data directory,
 * also for a run on DYNAMODB_ENDPOINT, or in an in-memory run's temporary directory.
 */
export function credentialKeysFile(inMemoryDirectory?: string): string {
  return credentialKeysFileIn(inMemoryDirectory ?? DATA_DIRECTORY);
}

/**
 * The museum of a local run: the document's example museum (a `.example` site, which no one can
 * own), each value replaced by its MUSEUM_* variable when set, so that JSON-LD is there to try.
 */
function localMuseum(): MuseumSettings {
  return Object.fromEntries(
    MUSEUM_SETTING_NAMES.map((name) => [name, process.env[MUSEUM_SETTINGS[name].variable] || EXAMPLE_MUSEUM[name]]),
  ) as unknown as MuseumSettings;
}

/**
 * The environment variables the deployed stack gives the functions, pointed at DynamoDB Local and
 * at the Secrets Manager stand-in (`secretsManagerEndpoint`, lib/local/secrets-manager-stand-in.ts).
 */
export function handlerEnvironment(endpoint: string, secretsManagerEndpoint?: string): Record<string, string> {
  const { accessKeyId, secretAccessKey } = localCredentials(endpoint);
  return {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    // For tools run with this environment that build their own local client (the benchmark's).
    [KEY_ID_VARIABLE]: accessKeyId,
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    ...(secretsManagerEndpoint ? { AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManagerEndpoint } : {}),
    CREDENTIAL_KEYS_SECRET: LOCAL_CREDENTIAL_KEYS_SECRET,
    TABLE_NAME: localTableNames.events,
    IDEMPOTENCY_TABLE_NAME: localTableNames.idempotency,
    MUSEUM_TIME_ZONE: process.env.MUSEUM_TIME_ZONE ?? 'UTC',
    POWERTOOLS_SERVICE_NAME: 'museum-special-events',
    POWERTOOLS_METRICS_NAMESPACE: 'MuseumSpecialEvents',
    // No CloudWatch agent reads EMF lines locally; set POWERTOOLS_METRICS_DISABLED=false to see them.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'INFO',
    CORS_ALLOWED_ORIGINS: process.env.CORS_ALLOWED_ORIGINS ?? '',
    ...museumEnvironment(localMuseum()),
  };
}
