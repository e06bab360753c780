// Whatever paths a client sends, the local API keeps nothing per path: the gateway's throttle keeps
// one token bucket per API Gateway method (lib/local/gateway-throttling.ts), and with CORS on every
// unknown path is answered by the one `/{proxy+}` method, as deployed. Measured from outside, on
// the local API process's retained JavaScript heap: Node writes a heap snapshot on SIGUSR2
// (`--heapsnapshot-signal`, set for this file's process only), which first collects all garbage,
// so the sum of its nodes' sizes is what the process keeps, less compiled code, which V8 compiles
// and flushes on its own schedule (±1 MB between two snapshots). Resident memory is no measure here:
// V8 grows its heap under a burst of garbage and gives the pages back only when its memory reducer
// runs, later on a busy machine (a 20,000-request burst raised the resident set by ~170 MB that a
// snapshot's collection returned at once, while the retained heap stayed within 0.1 MB).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DEPLOYED_THROTTLING, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { recordFigures } from './figures.ts';

const DISTINCT_PATHS = 10_000;
const WARM_UP = 2_000;
const CLIENTS = 16;
/** 50 bytes a path: less than keeping the path's string alone (a kept URL measured 80 bytes), let alone a bucket or an answer. */
const BOUND_MB = 0.5;

let local: OwnLocalApi | undefined;
let snapshots = '';

beforeAll(async () => {
  snapshots = await mkdtemp(join(tmpdir(), 'museum-heap-snapshots-'));
  local = await startOwnLocalApi('unknown-paths', {
    ...DEPLOYED_THROTTLING,
    // With CORS origins, as deployed with CORS on: the `/{proxy+}` mocks answer unknown paths.
    CORS_ALLOWED_ORIGINS: 'https://museum.example',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}`.trim(),
  });
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await local?.stop();
  await rm(snapshots, { recursive: true, force: true });
});

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

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
}

/** The process's retained heap in MB, code aside: a snapshot (after Node's full collection), its nodes' self sizes summed. */
async function retainedHeapMb(): Promise<number> {
  const isSnapshot = (name: string) => name.endsWith('.heapsnapshot');
  for (const name of (await readdir(snapshots)).filter(isSnapshot)) await rm(join(snapshots, name));
  local?.process.kill('SIGUSR2');
  // Node writes the file in place: it is whole once it parses.
  for (const started = Date.now(); Date.now() - started < 120_000;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [name] = (await readdir(snapshots)).filter(isSnapshot);
    if (!name) continue;
    let parsed: HeapSnapshot;
    try {
      parsed = JSON.parse(await readFile(join(snapshots, name), 'utf8')) as HeapSnapshot;
    } catch {
      continue; // still being written
    }
    const fields = parsed.snapshot.meta.node_fields;
    const [type, selfSize] = [fields.indexOf('type'), fields.indexOf('self_size')];
    const code = parsed.snapshot.meta.node_types[0].indexOf('code');
    let bytes = 0;
    for (let node = 0; node < parsed.nodes.length; node += fields.length)
      if (parsed.nodes[node + type] !== code) bytes += parsed.nodes[node + selfSize] ?? 0;
    return bytes / 1024 / 1024;
  }
  throw new Error('The local API wrote no heap snapshot within 120 s of SIGUSR2');
}

test(`${DISTINCT_PATHS} distinct unknown paths leave the local API's retained heap within ${BOUND_MB} MB of where it was`, async () => {
  await send(WARM_UP);
  const before = await retainedHeapMb();
  const statuses = await send(DISTINCT_PATHS);
  const after = await retainedHeapMb();
  recordFigures('unknown-paths-memory', {
    retainedBeforeMb: Number(before.toFixed(2)),
    retainedAfterMb: Number(after.toFixed(2)),
    statuses: Object.fromEntries(statuses),
  });
  // Answered by the mocks (404, 405) or, over the one bucket of their method, throttled (429): never a 5xx.
  expect([...statuses.keys()].filter((status) => ![404, 405, 429].includes(status))).toEqual([]);
  expect(after - before).toBeLessThanOrEqual(BOUND_MB);
}, 600_000);
