// A small HTTP client for the end-to-end tests: real requests to the local API, and every
// response checked against the OpenAPI contract (test/support/contract.ts).
import { randomUUID } from 'node:crypto';
import { closedBeforeAnswer, isWriteMethod, resendWaitMs, RETRIED_STATUSES } from '../../bench/support/resend-rule.ts';
import { assertMatchesContract } from './contract.ts';
import { injectedApiUrl, TEST_USERS, testEnvironment } from './test-environment.ts';

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
  /** Another local API than the suite's (one a test file starts for itself). */
  baseUrl?: string;
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

let injected = false;

/**
 * Sends this test file's requests to the local API whose DynamoDB lags its indexes and cancels a
 * share of writes (test/support/global-setup.ts): for the suites of the store's guarantees, which
 * follow the client's retry (apiRetrying) and poll the list (readUntilSettled). Jest gives each
 * test file its own copy of this module.
 */
export function useInjectedApi(): void {
  injected = true;
}

export async function api<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const url = options.baseUrl ?? (injected ? injectedApiUrl() : testEnvironment().url);
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

/** Creates an event as the editor, with an Idempotency-Key and retrying as a client does (apiRetrying), and returns it (asserting 201). */
export async function createEvent(fields: Partial<Record<string, unknown>> = {}): Promise<SpecialEventBody> {
  const response = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
    json: { ...sampleEvent(), ...fields },
    headers: withIdempotencyKey(),
  });
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const RETRY_ATTEMPTS = 10;

/**
 * A request as a client sends it (docs/API.md): a 409, 429 or 503 with Retry-After is sent again
 * unchanged (the same Idempotency-Key, the same If-Match) after a random wait of up to Retry-After
 * seconds. A write carries an Idempotency-Key (a fresh one unless the caller gave its own) and is
 * also sent again after a 504, after up to 1 s: on a busy machine a commit can outlive its time
 * limit, and only the key makes the retry apply it at most once or replay its first answer. A
 * request whose connection closed before any answer (closedBeforeAnswer) is sent again like a 504.
 * Once a write has had either, a refusal (isRefused) or a 429 is sent again too, whatever `retry` narrows:
 * it says only that the resend wrote nothing, not what the first attempt did. At most RETRY_ATTEMPTS times
 * in all; `retry` narrows the statuses retried with Retry-After or changes the attempts. Returns
 * the first other answer, or the last one: the caller asserts on it.
 */
export async function apiRetrying<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
  retry: { attempts?: number; statuses?: number[] } = {},
): Promise<ApiResponse<T>> {
  const statuses = new Set(retry.statuses ?? RETRIED_STATUSES);
  const hasKey = Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key');
  const sent = isWriteMethod(method) && !hasKey ? { ...options, headers: withIdempotencyKey(options.headers) } : options;
  for (let attempt = 1; ; attempt++) {
    let response: ApiResponse<T>;
    try {
      response = await api<T>(method, path, sent);
    } catch (error) {
      if (!closedBeforeAnswer(error) || attempt >= (retry.attempts ?? RETRY_ATTEMPTS)) throw error;
      if (isWriteMethod(method)) for (const status of RETRIED_STATUSES) statuses.add(status);
      await sleep(Math.random() * 1000);
      continue;
    }
    if (response.status === 504 && isWriteMethod(method)) for (const status of RETRIED_STATUSES) statuses.add(status);
    const wait = resendWaitMs(method, response, statuses);
    if (wait === undefined || attempt >= (retry.attempts ?? RETRY_ATTEMPTS)) return response;
    await sleep(wait);
  }
}

/**
 * A write refused with nothing written and nothing to come (docs/API.md, Write outcomes): 409 or 503
 * with Retry-After. A client resends it as told, but a finite number of times: on a busy machine a
 * writer under heavy contention can lose every race it was given, so a race test counts these as
 * outcomes, not failures, and checks that they changed nothing.
 */
export function isRefused(answer: { status: number; headers: Headers }): boolean {
  return [409, 503].includes(answer.status) && answer.headers.get('retry-after') !== null;
}

/** Headers with a fresh Idempotency-Key, for a write sent with apiRetrying. */
export function withIdempotencyKey(headers: Record<string, string> = {}): Record<string, string> {
  return { ...headers, 'Idempotency-Key': randomUUID() };
}

/**
 * How long a reader waits for the list to show a committed write. The list is read from global
 * secondary indexes, which are eventually consistent
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes): a bound
 * for polling, not an assertion.
 */
export const INDEX_SETTLE_BOUND_MS = 15_000;

/**
 * Reads until `settled` holds or `boundMs` (INDEX_SETTLE_BOUND_MS) has passed, and returns the last
 * read: the caller asserts on it. `everyRead` checks each read on the way, for what holds whatever
 * the lag (no duplicate, no ghost).
 */
export async function readUntilSettled<T>(
  read: () => Promise<T>,
  settled: (value: T) => boolean,
  everyRead: (value: T) => void = () => undefined,
  boundMs = INDEX_SETTLE_BOUND_MS,
): Promise<T> {
  const until = Date.now() + boundMs;
  for (;;) {
    const value = await read();
    everyRead(value);
    if (settled(value) || Date.now() > until) return value;
    await sleep(100);
  }
}
