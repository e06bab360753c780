// A small HTTP client for the end-to-end tests: real requests to the local API, and every
// response checked against the OpenAPI contract (test/support/contract.ts).
import { assertMatchesContract } from './contract.ts';
import { TEST_USERS, testEnvironment } from './test-environment.ts';

export type Credentials = { username: string; password: string } | 'none' | { header: string };

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface RequestOptions {
  as?: keyof typeof TEST_USERS | Credentials;
  /** Sent as JSON unless `rawBody` is given. */
  json?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Skip the contract check (for requests the contract deliberately does not describe). */
  skipContract?: boolean;
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

export async function api<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const { url } = testEnvironment();
  const who = options.as ?? 'editor';
  const credentials = typeof who === 'string' && who !== 'none' ? TEST_USERS[who] : who;
  const headers: Record<string, string> = { ...options.headers };
  if (credentials !== 'none') {
    headers.Authorization = 'header' in credentials ? credentials.header : basicAuthorization(credentials.username, credentials.password);
  }
  let body: string | Buffer | undefined = options.rawBody;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(`${url}${path}`, { method, headers, body });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const parsed = contentType.includes('json') && text ? (JSON.parse(text) as T) : (undefined as T);
  const result: ApiResponse<T> = { status: response.status, headers: response.headers, text, body: parsed };
  if (!options.skipContract) assertMatchesContract(method, path, result);
  return result;
}

/** Creates an event as the editor and returns it (asserting 201). */
export async function createEvent(fields: Partial<Record<string, unknown>> = {}): Promise<SpecialEventBody> {
  const response = await api<SpecialEventBody>('POST', '/special-events', { json: { ...sampleEvent(), ...fields } });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body;
}

export interface SpecialEventBody {
  eventId: string;
  name: string;
  location: string;
  eventDescription: string;
  dates: string[];
  price: number;
}

export function sampleEvent(): Omit<SpecialEventBody, 'eventId'> {
  return {
    name: 'Night at the Museum',
    location: 'Main Hall',
    eventDescription: 'An after-hours tour of the dinosaur galleries.',
    dates: ['2031-05-02'],
    price: 25,
  };
}

/** Jest runs files side by side in up to this many workers (jest.config.js). */
const WORKER_SHARES = 8;
const YEARS_PER_SHARE = Math.floor(7800 / WORKER_SHARES);
const workerShare = (Number(process.env.JEST_WORKER_ID ?? '1') - 1) % WORKER_SHARES;

/**
 * A year no other test file lists, so list assertions see only their own events: random within
 * 2100-9899, from a share of its own per jest worker, so that files running at the same time
 * never draw the same year.
 */
export function privateYear(): number {
  return 2100 + workerShare * YEARS_PER_SHARE + Math.floor(Math.random() * YEARS_PER_SHARE);
}
