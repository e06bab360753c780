// Throughput of the local API with the deployed method throttling (500 requests/s, burst 100 per
// authenticated method, one bucket per method), over node's fetch (undici, keep-alive):
// - sustained: after a ramp-up, closed loops of CLIENTS clients, each sending its next request when the last one
//   answered (as autocannon does), with known credentials, spread over the GET of an event and the
//   week's list (two methods): requests per second, p50/p99, and every answer that is not a 200;
// - during a flood: wrong credentials (each a new one, so each costs a check) sent at FLOOD_RATE a
//   second whether or not earlier ones have answered (an open loop), and beside them a known client
//   sending 10 requests a second: its p50/p99 and its answers, and what the flood was answered.
import { randomUUID } from 'node:crypto';
import { basicAuthorization, BENCH_PRINCIPAL } from '../support/api-events.ts';
import { BENCH_PASSWORD } from '../support/bench-tables.ts';
import { resendWaitMs } from '../support/resend-rule.ts';
import { summarise, type LatencySummary } from '../support/stats.ts';
import { atRate } from '../support/open-loop.ts';

export interface ThroughputResult {
  sustained: { clients: number; seconds: number; requestsPerSecond: number; latency: LatencySummary; statuses: Record<string, number> };
  flood: {
    floodPerSecond: number;
    seconds: number;
    flood: Record<string, number>;
    knownClient: { latency: LatencySummary; statuses: Record<string, number> };
  };
}

const CLIENTS = 8;
const SUSTAINED_SECONDS = 15;
const FLOOD_RATE = 100;
const FLOOD_SECONDS = 10;
const KNOWN_RATE = 10;

/** The first call's resend: the authorizer's 503 when it outlives its timeout. */
const SERVICE_UNAVAILABLE: ReadonlySet<number> = new Set([503]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tally(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

async function timed(url: string, authorization: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { headers: { Authorization: authorization } });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started }; // no answer at all
  }
}

export async function measureThroughput(url: string, window: { startDate: string; endDate: string }): Promise<ThroughputResult> {
  const known = basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD);
  const list = `${url}/special-events?startDate=${window.startDate}&endDate=${window.endDate}&limit=30`;
  // The first call checks the credentials; API Gateway (and the local gateway) then caches them.
  let first = await fetch(list, { headers: { Authorization: known } });
  // A first check in a cold environment on a busy machine may outlive the authorizer's timeout: a
  // 503 is sent again as the documented client does (resend-rule.ts).
  for (let attempt = 1; attempt < 10; attempt++) {
    const wait = resendWaitMs('GET', first, SERVICE_UNAVAILABLE);
    if (wait === undefined) break;
    await first.arrayBuffer();
    await sleep(wait);
    first = await fetch(list, { headers: { Authorization: known } });
  }
  const text = await first.text();
  if (first.status !== 200) throw new Error(`The week's list answered ${first.status}: ${text.slice(0, 200)}`);
  const [event] = JSON.parse(text) as { eventId: string }[];
  if (!event) throw new Error("The week's list holds no event");
  const paths = [`${url}/special-events/${event.eventId}`, list];

  // Ramp up one client at a time, so that the handlers' environments start one by one, as they
  // would under traffic that grows, rather than all at once on two shared cores (not measured).
  for (let clients = 1; clients <= CLIENTS; clients++) {
    for (const path of paths) await Promise.all(Array.from({ length: clients }, () => timed(path, known)));
  }

  const sustained: { status: number; ms: number }[] = [];
  const started = performance.now();
  const until = started + SUSTAINED_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = client; performance.now() < until; i++) sustained.push(await timed(paths[i % paths.length] as string, known));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;

  const wrong = () =>
    Math.random() < 0.5
      ? basicAuthorization(BENCH_PRINCIPAL, `wrong-${randomUUID()}`)
      : basicAuthorization(`nobody-${randomUUID().slice(0, 12)}`, `wrong-${randomUUID()}`);
  const [flood, knownClient] = await Promise.all([
    atRate(FLOOD_RATE * FLOOD_SECONDS, FLOOD_RATE, () => timed(paths[1] as string, wrong())),
    atRate(KNOWN_RATE * FLOOD_SECONDS, KNOWN_RATE, () => timed(paths[1] as string, known)),
  ]);

  return {
    sustained: {
      clients: CLIENTS,
      seconds: Math.round(elapsed * 10) / 10,
      requestsPerSecond: Math.round(sustained.length / elapsed),
      latency: summarise(sustained.map((answer) => answer.ms)),
      statuses: tally(sustained.map((answer) => answer.status)),
    },
    flood: {
      floodPerSecond: FLOOD_RATE,
      seconds: FLOOD_SECONDS,
      flood: tally(flood.map((answer) => answer.status)),
      knownClient: {
        latency: summarise(knownClient.map((answer) => answer.ms)),
        statuses: tally(knownClient.map((answer) => answer.status)),
      },
    },
  };
}
