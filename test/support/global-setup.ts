// Once per system-tier run (`npm run test:system`, jest.system.config.js): DynamoDB Local (in
// memory), the tables, a viewer user, and the local API as `npm start` runs it. Test files reach
// them through the variables set here.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { hashCredential } from '../../functions/auth/credentials.ts';
import { credentialKeysFileIn, ensureCredentialKeysFile, readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { ensureLocalTables, LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { CHILD_COVERAGE_DIRECTORY, CHILD_COVERAGE_VARIABLE } from './coverage-paths.ts';
import { behaviourFromEnvironment, startFaultProxy } from '../../bench/support/fault-proxy.ts';
import { startLocalApiProcess } from './local-api-process.ts';
import { openRunScratch } from './run-scratch.ts';
import { TEST_USERS } from './test-environment.ts';

/**
 * What the store's suites meet unless the environment says otherwise: a modest index lag and one
 * write in twenty cancelled, enough to exercise every retry and poll on each run.
 */
const DEFAULT_INJECTED_BEHAVIOUR = { indexLagMs: 200, cancelShare: 0.05 };

export default async function globalSetup(): Promise<void> {
  await openRunScratch();
  // The tier starts dozens of short-lived DynamoDB Locals: the client compiler alone and the serial
  // collector halve the CPU each spends starting (2.2-3 s instead of 5-6 s to its first answer, on
  // 2 cores), and not verifying the bytecode of the jars (Amazon's, as npm ci installed them from
  // the lockfile) takes off about 0.6 s more. The shared one below spends less too (40 s
  // of CPU instead of 63-68 s over the load suites: C2's compilations cost more than they save
  // here). `npm start` and the benchmark keep the JVM's defaults, whose steady state the benchmark's
  // floor ratios need. Every JVM of the tier reads JAVA_TOOL_OPTIONS (Apache Velocity's too, to no
  // measured gain) and prints one "Picked up" line saying so.
  const javaOptions = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:+UnlockDiagnosticVMOptions', '-XX:-BytecodeVerificationRemote'];
  process.env.JAVA_TOOL_OPTIONS = `${process.env.JAVA_TOOL_OPTIONS ?? ''} ${javaOptions.join(' ')}`.trim();
  const dynamodb = await startDynamoDbLocal();
  await ensureLocalTables(dynamodb.endpoint);
  const workDirectory = await mkdtemp(join(tmpdir(), 'museum-api-test-'));
  // One credential key for both APIs (a run on DYNAMODB_ENDPOINT keeps its key in its data
  // directory: lib/local/credential-keys-file.ts), and for the suites that add users.
  const credentialKeys = credentialKeysFileIn(workDirectory);
  await ensureCredentialKeysFile(credentialKeys);
  const keys = await readCredentialKeysFile(credentialKeys);
  const client = localClient(dynamodb.endpoint);
  // The editor too, before either API starts: both would otherwise race to create it.
  const users = new UsersStore(createDocumentClient(client), LOCAL_TABLE_NAMES.events);
  for (const role of ['viewer', 'editor'] as const)
    await users.putUser({ ...TEST_USERS[role], role, passwordHash: hashCredential(TEST_USERS[role].password, keys) }, 'create');
  client.destroy();

  // With MUSEUM_CHILD_COVERAGE=1 (`npm run test:system`) every Node process the tier starts writes
  // its V8 coverage, which test/support/coverage-report.ts merges: the two local APIs below, and
  // what the suites start (local runs, the users and events CLIs), through
  // test/support/child-coverage.ts. Not the jest workers themselves: jest reports what they ran.
  let coverage: Record<string, string> = {};
  if (process.env.MUSEUM_CHILD_COVERAGE === '1') {
    const childCoverage = resolve(CHILD_COVERAGE_DIRECTORY);
    await rm(childCoverage, { recursive: true, force: true });
    process.env[CHILD_COVERAGE_VARIABLE] = childCoverage;
    coverage = { NODE_V8_COVERAGE: childCoverage };
  }
  const start = async (name: string, endpoint: string) => {
    const dataDirectory = join(workDirectory, `${name}-data`);
    await mkdir(dataDirectory, { recursive: true, mode: 0o700 });
    await copyFile(credentialKeys, credentialKeysFileIn(dataDirectory));
    return startLocalApiProcess(
      {
        DYNAMODB_ENDPOINT: endpoint,
        MUSEUM_ADMIN_PASSWORD: TEST_USERS.editor.password,
        // Keep the test server's runtime file away from a developer's own `npm start` in .data/.
        MUSEUM_DATA_DIR: dataDirectory,
        ...coverage,
      },
      join(workDirectory, `${name}.log`),
    );
  };
  // The store's suites (useInjectedApi in api-client.ts) reach a second local API whose DynamoDB
  // calls pass the fault proxy: the indexes lag and a share of writes is cancelled, as DynamoDB may
  // at any time, so every run proves their guarantees under both. MUSEUM_TEST_INDEX_LAG_MS and
  // MUSEUM_TEST_CANCEL_SHARE change it (both 0: none, and those suites use the first API). Every
  // other suite keeps the first API on DynamoDB Local as it is: exact single-request answers.
  const behaviour = behaviourFromEnvironment(DEFAULT_INJECTED_BEHAVIOUR);
  const proxy = behaviour && (await startFaultProxy(dynamodb.endpoint, behaviour));
  const [api, injectedApi] = await Promise.all([
    start('local-api', dynamodb.endpoint),
    proxy ? start('injected-api', proxy.endpoint) : undefined,
  ]);
  const logFile = join(workDirectory, 'local-api.log');
  Object.assign(process.env, {
    MUSEUM_API_URL: api.url,
    MUSEUM_INJECTED_API_URL: injectedApi?.url ?? api.url,
    TEST_DYNAMODB_ENDPOINT: dynamodb.endpoint,
    TEST_TABLE_NAME: LOCAL_TABLE_NAMES.events,
    TEST_CREDENTIAL_KEYS_FILE: credentialKeys,
    TEST_LOCAL_API_LOG: logFile,
  });
  (globalThis as { museumTestServices?: unknown }).museumTestServices = { apis: [api, injectedApi], proxy, dynamodb };
}
