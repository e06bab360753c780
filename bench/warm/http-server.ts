// The local API gateway (lib/local/local-api-gateway.ts, what `npm start` serves) over the
// benchmark's bundles and DynamoDB Local, in its own process like `npm start`. Prints its URL.
import { startLocalApiGateway } from '../../lib/local/local-api-gateway.ts';

const gateway = await startLocalApiGateway({
  port: 0,
  functionsDirectory: process.env.BENCH_FUNCTIONS_DIRECTORY,
  authorizerCacheTtlSeconds: 300,
  // Latency, not throttling, is measured: no method limit (the deployed one would answer 429);
  // the throughput figures (BENCH_THROTTLE=deployed) are measured with the deployed limits.
  ...(process.env.BENCH_THROTTLE === 'deployed'
    ? {}
    : {
        throttleLimits: { rateLimit: 100_000, burstLimit: 100_000 },
      }),
});
console.error(`listening on ${gateway.url}`);
process.on('SIGTERM', () => {
  void gateway.close().then(() => process.exit(0));
});
