// The authorizer's costs: one keyed-hash check (functions/auth/credentials.ts) alone, and the
// authorizer bundle's calls on the warm path (the key read and cached, one GetItem against
// DynamoDB Local, one HMAC), with their CPU time and the process's memory, which is what the
// authorizer's Lambda memory size is chosen from.
// Runs in its own process (see bench/run.ts); settings come in BENCH_AUTHORIZER, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { hashCredential, newCredentialKeysText, parseCredentialKeys, verifyCredential } from '../../functions/auth/credentials.ts';
import { authorizerEvent, basicAuthorization, BENCH_PRINCIPAL, lambdaContext } from '../support/api-events.ts';
import { BENCH_PASSWORD } from '../support/bench-tables.ts';
import { median, round, summarise, type LatencySummary } from '../support/stats.ts';

interface AuthorizerSettings {
  authorizerBundle: string;
  /** Keyed-hash checks timed alone (in batches of 1,000). */
  hashChecks: number;
  warmCalls: number;
}

export interface AuthorizerResult {
  keyedHash: { batches: number; microsP50: number };
  warm: { latency: LatencySummary; cpuMsPerCall: number };
  authorizerFirstCallMs: number;
  maxRssMb: number;
}

type Handler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

const settings = JSON.parse(process.env.BENCH_AUTHORIZER ?? '{}') as AuthorizerSettings;

// The keyed hash straight from credentials.ts, CPU time per check.
const keys = parseCredentialKeys(newCredentialKeysText());
const stored = hashCredential(BENCH_PASSWORD, keys);
const perCheck: number[] = [];
for (let batch = 0; batch < Math.max(1, Math.round(settings.hashChecks / 1000)); batch++) {
  const before = process.cpuUsage();
  for (let i = 0; i < 1000; i++) if (!verifyCredential(BENCH_PASSWORD, stored, keys)) throw new Error('The password did not verify');
  const used = process.cpuUsage(before);
  perCheck.push((used.user + used.system) / 1000);
}

// The authorizer bundle: the first call reads the key (Secrets Manager stand-in) and the user;
// later calls, the key cached, read the user and compute one MAC each.
const { handler } = (await import(pathToFileURL(settings.authorizerBundle).href)) as { handler: Handler };
const call = async () => {
  const input = authorizerEvent(basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD));
  const context = lambdaContext('authorizer', 'authorizer');
  const started = performance.now();
  const result = await handler(input, context);
  const elapsed = performance.now() - started;
  if (result.principalId !== BENCH_PRINCIPAL) throw new Error('The authorizer did not allow the bench user');
  return elapsed;
};
const firstCall = await call();
for (let i = 0; i < 100; i++) await call();
const warm: number[] = [];
const cpuBefore = process.cpuUsage();
for (let i = 0; i < settings.warmCalls; i++) warm.push(await call());
const warmCpu = process.cpuUsage(cpuBefore);

const result: AuthorizerResult = {
  keyedHash: { batches: perCheck.length, microsP50: round(median(perCheck), 2) },
  warm: { latency: summarise(warm), cpuMsPerCall: round((warmCpu.user + warmCpu.system) / 1000 / settings.warmCalls, 3) },
  authorizerFirstCallMs: round(firstCall, 1),
  maxRssMb: round(process.resourceUsage().maxRSS / 1024, 1),
};
writeSync(3, JSON.stringify(result));
process.exit(0);
