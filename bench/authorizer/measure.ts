// The authorizer's costs: one scrypt verification with the parameters in use
// (functions/auth/passwords.ts), and a verification served from basic-auth.ts's in-memory
// cache, measured through the authorizer bundle. Also the CPU time and memory they need, which
// is what the authorizer's Lambda memory size is chosen from.
// Runs in its own process (see bench/run.ts); settings come in BENCH_AUTHORIZER, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { hashPassword, SCRYPT_PARAMETERS, verifyPassword } from '../../functions/auth/passwords.ts';
import { authorizerEvent, basicAuthorization, BENCH_PRINCIPAL, lambdaContext } from '../support/api-events.ts';
import { BENCH_PASSWORD } from '../support/bench-tables.ts';
import { median, round, summarise, type LatencySummary } from '../support/stats.ts';

interface AuthorizerSettings {
  authorizerBundle: string;
  verifications: number;
  cachedCalls: number;
}

export interface AuthorizerResult {
  scrypt: { N: number; r: number; p: number };
  verification: { runs: number; firstMs: number; p50Ms: number; cpuMsP50: number; maxRssMb: number };
  cached: { latency: LatencySummary; cpuMsPerCall: number };
  authorizerFirstCallMs: number;
}

type Handler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

const settings = JSON.parse(process.env.BENCH_AUTHORIZER ?? '{}') as AuthorizerSettings;

// scrypt straight from passwords.ts: wall time and CPU time (scrypt runs on a libuv thread;
// process.cpuUsage counts every thread of the process).
const storedHash = await hashPassword(BENCH_PASSWORD);
const wall: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < settings.verifications; i++) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  if (!(await verifyPassword(BENCH_PASSWORD, storedHash))) throw new Error('The password did not verify');
  wall.push(performance.now() - started);
  const used = process.cpuUsage(cpuBefore);
  cpu.push((used.user + used.system) / 1000);
}

// The authorizer bundle: the first call reads the user and runs scrypt; later calls with the
// same header are served from its cache.
const { handler } = (await import(pathToFileURL(settings.authorizerBundle).href)) as { handler: Handler };
const event = () => authorizerEvent(basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD));
const call = async () => {
  const input = event();
  const context = lambdaContext('authorizer', 'authorizer');
  const started = performance.now();
  const result = await handler(input, context);
  const elapsed = performance.now() - started;
  if (result.principalId !== BENCH_PRINCIPAL) throw new Error('The authorizer did not allow the bench user');
  return elapsed;
};
const firstCall = await call();
for (let i = 0; i < 100; i++) await call();
const cached: number[] = [];
const cpuBefore = process.cpuUsage();
for (let i = 0; i < settings.cachedCalls; i++) cached.push(await call());
const cachedCpu = process.cpuUsage(cpuBefore);

const result: AuthorizerResult = {
  scrypt: { N: SCRYPT_PARAMETERS.N, r: SCRYPT_PARAMETERS.r, p: SCRYPT_PARAMETERS.p },
  verification: {
    runs: wall.length,
    firstMs: round(wall[0] ?? Number.NaN, 1),
    p50Ms: round(median(wall), 1),
    cpuMsP50: round(median(cpu), 1),
    maxRssMb: round(process.resourceUsage().maxRSS / 1024, 1),
  },
  cached: { latency: summarise(cached), cpuMsPerCall: round((cachedCpu.user + cachedCpu.system) / 1000 / settings.cachedCalls) },
  authorizerFirstCallMs: round(firstCall, 1),
};
writeSync(3, JSON.stringify(result));
process.exit(0);
