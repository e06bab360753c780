// Once per `npm test`: DynamoDB Local (in memory), the tables, a viewer user, and the local API
// as `npm start` runs it. Test files reach them through the variables set here.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { hashPassword } from '../../functions/auth/passwords.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { ensureLocalTables, LOCAL_TABLE_NAMES, localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { behaviourFromEnvironment, startFaultProxy } from './fault-proxy.ts';
import { startLocalApiProcess } from './local-api-process.ts';
import { TEST_USERS } from './test-environment.ts';

export default async function globalSetup(): Promise<void> {
  const dynamodb = await startDynamoDbLocal();
  await ensureLocalTables(dynamodb.endpoint);
  const client = localClient(dynamodb.endpoint);
  await new UsersStore(createDocumentClient(client), LOCAL_TABLE_NAMES.events).putUser(
    { ...TEST_USERS.viewer, role: 'viewer', passwordHash: await hashPassword(TEST_USERS.viewer.password) },
    'create',
  );
  client.destroy();

  // `npm test` collects the V8 coverage of this process too (test/support/coverage-report.ts).
  const childCoverage = process.env.MUSEUM_CHILD_COVERAGE === '1' ? resolve('coverage/local-api-v8') : undefined;
  if (childCoverage) await rm(childCoverage, { recursive: true, force: true });
  const workDirectory = await mkdtemp(join(tmpdir(), 'museum-api-test-'));
  const logFile = join(workDirectory, 'local-api.log');
  // MUSEUM_TEST_INDEX_LAG_MS / MUSEUM_TEST_CANCEL_SHARE: the local API reaches DynamoDB Local
  // through the fault proxy, which lags the indexes and cancels writes as DynamoDB may.
  const behaviour = behaviourFromEnvironment();
  const proxy = behaviour && (await startFaultProxy(dynamodb.endpoint, behaviour));
  const api = await startLocalApiProcess(
    {
      DYNAMODB_ENDPOINT: proxy?.endpoint ?? dynamodb.endpoint,
      MUSEUM_ADMIN_PASSWORD: TEST_USERS.editor.password,
      // Keep the test server's runtime file away from a developer's own `npm start` in .data/.
      MUSEUM_DATA_DIR: join(workDirectory, 'data'),
      ...(childCoverage ? { NODE_V8_COVERAGE: childCoverage } : {}),
    },
    logFile,
  );
  Object.assign(process.env, {
    MUSEUM_API_URL: api.url,
    TEST_DYNAMODB_ENDPOINT: dynamodb.endpoint,
    TEST_TABLE_NAME: LOCAL_TABLE_NAMES.events,
    TEST_LOCAL_API_LOG: logFile,
  });
  (globalThis as { museumTestServices?: unknown }).museumTestServices = { api, dynamodb };
}
