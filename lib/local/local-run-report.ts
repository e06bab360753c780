// What a local run prints besides its start-up steps: a line per request (short and human on a
// terminal, JSON otherwise), and, once it listens, the admin's first password, where the API and
// its docs are, where the data is kept, and how to stop it.
import { relative } from 'node:path';
import { KEY_FILE } from './dynamodb-local.ts';
import type { AccessLogEntry } from './http-server.ts';
import { DATA_DIRECTORY, DYNAMODB_DIRECTORY, usesDataDirectory } from './local-environment.ts';

/** The access log: JSON lines (with the time), or requestLine()'s on a terminal. */
export function accessLogWriter(jsonLogs: boolean, say: (line: string) => void): (entry: AccessLogEntry) => void {
  return jsonLogs ? (entry) => say(JSON.stringify({ time: new Date().toISOString(), ...entry })) : (entry) => say(requestLine(entry));
}

/** `12:00:01 GET /v1.1/special-events 200 14 ms admin`: what a person watching wants. */
function requestLine(entry: AccessLogEntry): string {
  const time = new Date().toTimeString().slice(0, 8);
  return `${time} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs} ms${entry.user ? ` ${entry.user}` : ''}`;
}

export interface ListeningRun {
  url: string;
  /** The DynamoDB endpoint, and whether this run started DynamoDB Local there. */
  endpoint: string;
  started: boolean;
  /** The admin user created at this start, if one was. */
  created: { password: string; generated: boolean } | undefined;
  /** The settings as given (before the run added its own to process.env). */
  givenSettings: NodeJS.ProcessEnv;
}

/** The lines that end the start-up. */
export function announce(say: (line: string) => void, { url, endpoint, started, created, givenSettings }: ListeningRun): void {
  if (created) {
    say(
      created.generated
        ? `Created user admin (editor) with password: ${created.password}\n(shown only this once; change it with: ${passwordCommand(endpoint, started, givenSettings)})`
        : 'Created user admin (editor) with the password in MUSEUM_ADMIN_PASSWORD.',
    );
  }
  say(`Museum Special Events API listening on ${url}`);
  say(`  docs  ${url}/docs`);
  say(`  data  ${dataDescription(endpoint, started)}`);
  say(process.stdout.isTTY ? 'Ctrl-C stops it.' : 'SIGINT or SIGTERM stops it.');
}

/** The users CLI command that reaches this run's users (it finds a run on the data directory or in memory by its MUSEUM_DATA_DIR). */
function passwordCommand(endpoint: string, started: boolean, givenSettings: NodeJS.ProcessEnv): string {
  // MUSEUM_DATA_DIR names the run (in memory) or, on DYNAMODB_ENDPOINT, where the credential key is.
  const same = (started ? ['MUSEUM_DATA_DIR', 'TABLE_NAME'] : ['MUSEUM_DYNAMODB_KEY_ID', 'TABLE_NAME', 'MUSEUM_DATA_DIR']).filter(
    (name) => givenSettings[name],
  );
  return `${started ? '' : `DYNAMODB_ENDPOINT=${endpoint} `}npm run -s users -- passwd admin${same.length > 0 ? `, with the same ${same.join(' and ')}` : ''}`;
}

function dataDescription(endpoint: string, started: boolean): string {
  if (!started) return `DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`;
  if (!usesDataDirectory()) return 'in memory (MUSEUM_IN_MEMORY=1): gone when this stops';
  const shown = relative(process.cwd(), DATA_DIRECTORY) || '.';
  return `${shown.startsWith('..') ? DATA_DIRECTORY : shown}/ (DynamoDB Local answers only its key: ${relative(DATA_DIRECTORY, DYNAMODB_DIRECTORY)}/${KEY_FILE})`;
}
