// Typed configuration from environment variables, read once per container, and the stores
// built from it: every store is built here (the shared client, the table names), and the handlers
// take theirs from here. Nothing here runs at import time: each handler builds only what it uses.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BasicAuthenticator } from './auth/basic-auth.ts';
import { credentialKeys } from './auth/credential-keys.ts';
import { isTimeZone } from './events/calendar-dates.ts';
import { MUSEUM_SETTING_NAMES, MUSEUM_SETTINGS, museumSettingsFrom, type MuseumSettings } from './events/museum-settings.ts';
import { requiredEnv } from './environment.ts';
import { getDocumentClient } from './store/dynamodb-client.ts';
import { EventsStore } from './store/events-store.ts';
import type { TableStore } from './store/table-store.ts';
import { UsersStore } from './auth/users-store.ts';

let authenticator: BasicAuthenticator | undefined;
let timeZone: string | undefined;
let museum: { settings: MuseumSettings | undefined } | undefined;

/**
 * A store whose DynamoDB calls `signal` aborts at `deadline` (epoch ms: the invocation's early
 * timeout); building one is cheap.
 */
export function eventsStore(signal?: AbortSignal, deadline?: number): EventsStore {
  // Only the write functions may use the idempotency table (lib/cdk/function-permissions.ts).
  return new EventsStore(getDocumentClient(), requiredEnv('TABLE_NAME'), process.env.IDEMPOTENCY_TABLE_NAME, signal, deadline);
}

/** A store of the events table that takes the client, the table's name and an abort signal (table-store.ts). */
type TableStoreClass<Store extends TableStore> = new (client: DynamoDBDocumentClient, tableName: string, signal?: AbortSignal) => Store;

/**
 * A store of the events table whose DynamoDB calls `signal` aborts: `tableStore(SubscriptionsStore,
 * signal)`, the calendar feeds', the list's or the change feed's reader. The handler names the
 * class rather than this file importing each: a bundle then carries only the stores its handler
 * uses (esbuild keeps the top-level code of every module a bundle imports).
 */
export function tableStore<Store extends TableStore>(storeClass: TableStoreClass<Store>, signal?: AbortSignal): Store {
  return new storeClass(getDocumentClient(), requiredEnv('TABLE_NAME'), signal);
}

export function basicAuthenticator(): BasicAuthenticator {
  if (!authenticator) {
    const secretId = requiredEnv('CREDENTIAL_KEYS_SECRET');
    authenticator = new BasicAuthenticator(tableStore(UsersStore), () => credentialKeys(secretId));
  }
  return authenticator;
}

/** The museum's IANA time zone (MUSEUM_TIME_ZONE, default UTC): "today" for the list's default range. */
export function museumTimeZone(): string {
  if (timeZone === undefined) {
    const configured = process.env.MUSEUM_TIME_ZONE || 'UTC';
    if (!isTimeZone(configured)) throw new Error(`MUSEUM_TIME_ZONE "${configured}" is not an IANA time zone`);
    timeZone = configured;
  }
  return timeZone;
}

/** The museum's name, address, currency and event pages (MUSEUM_* variables), or undefined when the deployment names no museum. */
export function museumSettings(): MuseumSettings | undefined {
  museum ??= {
    settings: museumSettingsFrom(
      Object.fromEntries(MUSEUM_SETTING_NAMES.map((name) => [name, process.env[MUSEUM_SETTINGS[name].variable]])),
      (name) => MUSEUM_SETTINGS[name].variable,
    ),
  };
  return museum.settings;
}
