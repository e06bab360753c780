// `npm run fuzz [-- --requests N --seed S --concurrency C --password-checks P --agreement-runs A]`:
// the long HTTP fuzz. Starts DynamoDB Local and the local API exactly as `npm test` does, sends N
// generated bad requests (default 7000) over all five routes, then 4 x A requests (default 4 x 500)
// generated from the served OpenAPI document (test/contract/document-agreement.ts), prints the
// counts and exits non-zero on any 5xx, any answer that is not a documented problem, any
// disagreement between the document and the server, or an API that stopped serving.
import { parseArgs } from 'node:util';
import globalSetup from '../test/support/global-setup.ts';
import globalTeardown from '../test/support/global-teardown.ts';
import { runAgreement } from '../test/contract/document-agreement.ts';
import { apiStillServes, formatReport, runFuzz } from '../test/reliability/fuzz-runner.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '7000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'password-checks': { type: 'string', default: '40' },
    'agreement-runs': { type: 'string', default: '500' },
  },
});
const options = {
  requests: Number(values.requests),
  seed: values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed),
  concurrency: Number(values.concurrency),
  maxPasswordChecks: Number(values['password-checks']),
};

console.log(`Starting DynamoDB Local and the local API...`);
await globalSetup();
let exitCode = 1;
try {
  const url = process.env.MUSEUM_API_URL as string;
  console.log(`Fuzzing ${url}: ${options.requests} requests, seed ${options.seed}, ${options.concurrency} at a time`);
  const report = await runFuzz({ url, ...options }, (done) => {
    if (done % 1000 === 0) console.log(`  ${done} requests sent`);
  });
  const alive = await apiStillServes(url);
  console.log(formatReport(report));
  console.log(`API still serving afterwards: ${alive ? 'yes' : 'NO'}`);
  const runsPerKind = Number(values['agreement-runs']);
  console.log(`Document agreement: ${runsPerKind * 4} requests generated from the served OpenAPI document, seed ${options.seed}`);
  const agreement = await runAgreement({ url, seed: options.seed, runsPerKind });
  console.log(`  ${agreement.requests} requests: ${agreement.accepted} accepted, ${agreement.rejected} rejected with 400, ${agreement.disagreements.length} disagreements`);
  for (const disagreement of agreement.disagreements.slice(0, 20)) console.log(`  DISAGREES ${disagreement}`);
  exitCode = report.failures.length === 0 && report.serverErrors === 0 && alive && agreement.disagreements.length === 0 ? 0 : 1;
} finally {
  await globalTeardown();
}
process.exit(exitCode);
