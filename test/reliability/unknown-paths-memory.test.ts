// Whatever paths a client sends, the local API's memory stays flat: the gateway's throttle keeps
// one token bucket per API Gateway method (lib/local/gateway-throttling.ts), and with CORS on every
// unknown path is answered by the one `/{proxy+}` method, as deployed. Measured from outside: the
// resident set of the local API process (/proc/<pid>/status), after a warm-up of the same kind of
// requests, and at its lowest while it settles after the run (V8 collects when allocation stops).
// Requests are sent by a few clients at once, each waiting for its answer, so a busy machine only
// makes the run slower.
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { DEPLOYED_THROTTLING, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { recordFigures } from './figures.ts';

const DISTINCT_PATHS = 20_000;
const WARM_UP = 4_000;
const CLIENTS = 16;
const BOUND_MB = 20;

let local: OwnLocalApi | undefined;

beforeAll(async () => {
  // With CORS origins, as deployed with CORS on: the `/{proxy+}` mocks answer unknown paths.
  local = await startOwnLocalApi('unknown-paths', {
    ...DEPLOYED_THROTTLING,
    CORS_ALLOWED_ORIGINS: 'https://museum.example',
  });
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await local?.stop();
});

async function residentMb(): Promise<number> {
  const status = await readFile(`/proc/${local?.process.pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  if (!(kb > 0)) throw new Error('No VmRSS in /proc/<pid>/status');
  return kb / 1024;
}

/** Paths no resource has, paths below an event, and a method an event lacks (405): each distinct. */
function distinctRequest(i: number): { method: string; path: string } {
  const id = randomUUID();
  if (i % 3 === 0) return { method: 'GET', path: `/no-such-${id}` };
  if (i % 3 === 1) return { method: 'GET', path: `/special-events/${id}/tickets/${i}` };
  return { method: 'PUT', path: `/special-events/${id}` };
}

async function send(count: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        const { method, path } = distinctRequest(next++);
        const response = await fetch(`${local?.url}${path}`, { method });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

/**
 * The lowest RSS over 15 s of quiet: V8 gives memory back when a process goes idle (its memory
 * reducer), later when the machine is busy, so a short look can see garbage that is not kept.
 */
async function lowestWhileSettling(): Promise<number> {
  let lowest = Infinity;
  for (let sample = 0; sample < 30; sample++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    lowest = Math.min(lowest, await residentMb());
  }
  return lowest;
}

// A KNOWN DEFECT, marked so that the suite says so and fails once it is fixed: since every method
// takes the stage's 500/s (issue 41), the `/{proxy+}` mocks answer these requests instead of a
// 429, and the local API's resident memory grows by ~75 MB over the first 20,000 and ~35 MB over
// the next 20,000 (measured 2026-11-29; the code before this round grows as much once its mocks
// answer: MUSEUM_THROTTLE_RATE_LIMIT=500). Where the served mock path keeps memory is not yet
// found (docs/RELIABILITY.md, "Known defects").
test.failing(
  `${DISTINCT_PATHS} distinct unknown paths leave the local API's memory within ${BOUND_MB} MB of where it started`,
  async () => {
    await send(WARM_UP);
    const before = await lowestWhileSettling();
    const statuses = await send(DISTINCT_PATHS);
    const after = await lowestWhileSettling();
    recordFigures('unknown-paths-memory', {
      beforeMb: Math.round(before),
      afterMb: Math.round(after),
      statuses: Object.fromEntries(statuses),
    });
    // Answered by the mocks (404, 405) or, over the one bucket of their method, throttled (429): never a 5xx.
    expect([...statuses.keys()].filter((status) => ![404, 405, 429].includes(status))).toEqual([]);
    expect(after - before).toBeLessThanOrEqual(BOUND_MB);
  },
  600_000,
);
