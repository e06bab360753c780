// Sends generated bad requests (bad-requests.ts) to a running API and checks every answer:
// no 5xx but a 503 the document lists for the operation (a busy machine may answer it: a
// timed-out DynamoDB call, an authorizer turned away), every error a documented problem+json, documented operations also against the
// contract, and an answer for every request. Used by the fixed-seed slice in `npm run test:system`
// (fuzz.test.ts), which `npm run fuzz` runs with thousands of requests (fuzz-settings.ts).
import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { parseBasicCredentials } from '../../functions/auth/basic-auth.ts';
import { methodOverride } from '../../lib/local/proxy-event.ts';
import { basicAuthorization } from '../support/api-client.ts';
import { assertMatchesContract } from '../support/contract.ts';
import { TEST_USERS } from '../support/test-environment.ts';
import { badRequest, FUZZ_CATEGORIES, type FuzzCategory, type FuzzContext, type FuzzRequest } from './bad-requests.ts';
import { documentedProblemKind, expectServiceUnavailable } from './problem-check.ts';

export interface FuzzOptions {
  /** The API base URL, ending with the base path (`/v1.1`). */
  url: string;
  seed: number;
  requests: number;
  concurrency: number;
}

export interface FuzzFailure {
  request: string;
  problem: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  byCategory: Record<FuzzCategory, number>;
  byStatus: Record<string, number>;
  /** 5xx answers other than the documented 503 (service-unavailable, Retry-After, listed for the operation). */
  serverErrors: number;
  /** Documented 503s: allowed, and counted so that a run made mostly of them shows. */
  temporaryFailures: number;
  passwordChecks: number;
  failures: FuzzFailure[];
  durationMs: number;
}

const REQUEST_TIMEOUT_MS = 15_000;

interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
}

function send(agent: Agent, base: URL, fuzz: FuzzRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // Raw name/value pairs (repeated names allowed); Node adds no Host header to those by itself.
    const pairs = fuzz.headers.some(([name]) => name.toLowerCase() === 'host') ? fuzz.headers : [['Host', base.host], ...fuzz.headers];
    const headers = pairs.flatMap(([name, value]) => [name, value] as string[]);
    const outgoing = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: fuzz.method,
        path: `${base.pathname}${fuzz.path}`,
        headers,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const single of [value ?? []].flat()) answerHeaders.append(name, single);
          }
          resolve({ status: response.statusCode ?? 0, headers: answerHeaders, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    outgoing.on('error', reject);
    outgoing.end(fuzz.body);
  });
}

/** What is wrong with the answer to `fuzz`, if anything. */
function answerProblem(fuzz: FuzzRequest, answer: RawAnswer): string | undefined {
  if (answer.status === 503) {
    // Allowed when it is the documented temporary failure; the contract check below makes sure the
    // document lists 503 for this operation.
    try {
      if (fuzz.method === 'HEAD') {
        if (!/^[1-9]\d*$/.test(answer.headers.get('retry-after') ?? '')) throw new Error('no Retry-After');
      } else expectServiceUnavailable(answer);
    } catch (error) {
      return `server error 503 that is not the documented temporary failure: ${(error as Error).message}`;
    }
  } else if (answer.status >= 500) return `server error ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 200) return `unexpected status ${answer.status}`;
  if (fuzz.expectedStatus !== undefined && answer.status !== fuzz.expectedStatus && answer.status !== 503) {
    return `status ${answer.status} where the request's class calls for ${fuzz.expectedStatus}: ${answer.text.slice(0, 300)}`;
  }
  try {
    if (answer.status >= 400) documentedProblemKind(answer, { bodyless: fuzz.method === 'HEAD' });
    // The contract check covers documented operations and API Gateway's own answers to the rest;
    // a HEAD answer has no body to check. A fragment never reaches the server's routing.
    // Checked as the method API Gateway routes it as (X-HTTP-Method-Override).
    const routed = methodOverride(fuzz.headers.flat()) ?? fuzz.method;
    if (fuzz.method !== 'HEAD') assertMatchesContract(routed, fuzz.path.split('#')[0] ?? '', answer);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

function describeRequest(fuzz: FuzzRequest): string {
  const body = fuzz.body === undefined ? '' : ` body(${Buffer.byteLength(fuzz.body)} B)=${JSON.stringify(String(fuzz.body).slice(0, 200))}`;
  const headers = fuzz.headers.map(([name, value]) => `${name}: ${value.slice(0, 80)}`).join('; ');
  return `[${fuzz.category}] ${fuzz.method} ${fuzz.path.slice(0, 200)} {${headers}}${fuzz.anonymous ? ' (anonymous)' : ''}${body}`;
}

/** Creates the event the run's PATCH, GET and DELETE requests aim at. */
export async function fuzzContext(url: string): Promise<FuzzContext> {
  const editorAuthorization = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
  const response = await fetch(`${url}/special-events`, {
    method: 'POST',
    headers: { Authorization: editorAuthorization, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name: 'Fuzz target',
      location: 'Lab',
      eventDescription: 'Aimed at by the fuzz',
      dates: ['9990-06-01'],
      price: 1,
    }),
  });
  if (response.status !== 201) throw new Error(`could not create the fuzz target: ${response.status}`);
  const { eventId } = (await response.json()) as { eventId: string };
  return {
    targetId: eventId,
    editorAuthorization,
    viewerAuthorization: basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password),
  };
}

/**
 * The requests of a run: the same for the same seed and count. A request without credentials of its
 * own (and not meant to be anonymous) gets a valid user's, whose authorization the gateway caches as
 * API Gateway does; `passwordChecks` counts those that carry well-formed wrong ones.
 */
export function fuzzRequests(context: FuzzContext, options: Pick<FuzzOptions, 'seed' | 'requests'>) {
  const valid = new Set([context.editorAuthorization, context.viewerAuthorization]);
  let passwordChecks = 0;
  const requests = fc.sample(badRequest(context), { seed: options.seed, numRuns: options.requests }).map((fuzz) => {
    const given = fuzz.headers.filter(([name]) => name.toLowerCase() === 'authorization');
    if (given.length === 0 && !fuzz.anonymous) {
      return {
        ...fuzz,
        headers: [...fuzz.headers, ['Authorization', fuzz.as === 'viewer' ? context.viewerAuthorization : context.editorAuthorization]] as [
          string,
          string,
        ][],
      };
    }
    const effective = given.at(-1)?.[1];
    if (effective !== undefined && !valid.has(effective) && parseBasicCredentials(effective)) passwordChecks += 1;
    return fuzz;
  });
  return { requests, passwordChecks };
}

export async function runFuzz(options: FuzzOptions, onProgress?: (done: number) => void): Promise<FuzzReport> {
  const started = performance.now();
  const base = new URL(options.url);
  const context = await fuzzContext(options.url);
  const { requests, passwordChecks } = fuzzRequests(context, options);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const report: FuzzReport = {
    seed: options.seed,
    requests: 0,
    byCategory: Object.fromEntries(FUZZ_CATEGORIES.map((category) => [category, 0])) as Record<FuzzCategory, number>,
    byStatus: {},
    serverErrors: 0,
    temporaryFailures: 0,
    passwordChecks,
    failures: [],
    durationMs: 0,
  };
  let next = 0;
  async function worker() {
    while (next < requests.length) {
      const fuzz = requests[next++] as FuzzRequest;
      let problem: string | undefined;
      try {
        const answer = await send(agent, base, fuzz);
        report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
        problem = answerProblem(fuzz, answer);
        if (answer.status === 503 && !problem) report.temporaryFailures += 1;
        else if (answer.status >= 500) report.serverErrors += 1;
      } catch (error) {
        report.byStatus.none = (report.byStatus.none ?? 0) + 1;
        problem = `no answer: ${(error as Error).message}`;
      }
      report.requests += 1;
      report.byCategory[fuzz.category] += 1;
      if (problem) report.failures.push({ request: describeRequest(fuzz), problem });
      onProgress?.(report.requests);
    }
  }
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

/** After a run: the API still answers, and the target event is still there. */
export async function apiStillServes(url: string): Promise<boolean> {
  const authorization = basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password);
  const response = await fetch(`${url}/special-events?startDate=9990-01-01&endDate=9990-12-31&limit=30`, {
    headers: { Authorization: authorization },
  });
  return response.status === 200 && Array.isArray(await response.json());
}

/** A few lines for people: totals, then requests and answers by category and status. */
export function formatReport(report: FuzzReport): string {
  const lines = [
    `seed ${report.seed}: ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s, ${report.serverErrors} answered an undocumented 5xx, ${report.temporaryFailures} the documented 503, ${report.failures.length} failed a check, ${report.passwordChecks} with wrong Basic credentials (one check each)`,
    `by category: ${Object.entries(report.byCategory)
      .map(([category, count]) => `${category} ${count}`)
      .join(', ')}`,
    `by status:   ${Object.entries(report.byStatus)
      .sort()
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ')}`,
  ];
  for (const failure of report.failures.slice(0, 20)) lines.push(`FAILED ${failure.request}\n  -> ${failure.problem}`);
  return lines.join('\n');
}
