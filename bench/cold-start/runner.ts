// One cold start, in a fresh Node process: load a function bundle and complete its first
// invocation, then report the timings on file descriptor 3 and exit. The benchmark compiles
// this file to plain JavaScript first: Node's own TypeScript stripping would add ~30 ms to
// every start and blur the comparison with the floor.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { lambdaContext } from '../support/api-events.ts';

interface ColdStartRequest {
  bundle: string;
  functionName: string;
  kind: 'handler' | 'authorizer';
  event: unknown;
}

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

const request = JSON.parse(process.env.BENCH_COLD_START ?? '{}') as ColdStartRequest;
const loadStart = performance.now();
const { handler } = (await import(pathToFileURL(request.bundle).href)) as { handler: Handler };
const loaded = performance.now();
const result = (await handler(request.event, lambdaContext(request.functionName, request.kind))) as
  { statusCode?: number; principalId?: string } | undefined;
const done = performance.now();
const cpu = process.cpuUsage();

writeSync(
  3,
  JSON.stringify({
    // performance.now() counts from the start of the process: Node's own start-up is included.
    initMs: done,
    nodeStartMs: loadStart,
    loadMs: loaded - loadStart,
    firstInvocationMs: done - loaded,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    outcome: result?.statusCode ?? (result?.principalId ? 'allowed' : 'unknown'),
  }),
);
// The SDK keeps its connection alive; a Lambda sandbox would be frozen here.
process.exit(0);
