// `npm start`: the API on http://127.0.0.1:$PORT/v1.1, backed by DynamoDB Local.
import { randomBytes } from 'node:crypto';
import { ensureLocalTables } from '../lib/local/dynamodb-local.ts';
import { startLocalApiGateway } from '../lib/local/local-api-gateway.ts';
import {
  forgetRunningLocalApi,
  handlerEnvironment,
  localDynamoDb,
  localTableNames,
  recordRunningLocalApi,
  runningLocalApi,
} from '../lib/local/local-environment.ts';
import { createDocumentClient } from '../functions/shared/dynamodb-client.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../functions/shared/passwords.ts';
import { UsersStore } from '../functions/shared/users-store.ts';

const inMemory = process.env.MUSEUM_IN_MEMORY === '1';
if (!inMemory && !process.env.DYNAMODB_ENDPOINT) {
  const running = await runningLocalApi();
  if (running) {
    console.error(`The local API is already running (pid ${running.pid}) at ${running.url} on this data directory.`);
    process.exit(1);
  }
}

// Checked before anything starts. The users CLI's rule, so that no shorter password ever exists.
const adminPassword = process.env.MUSEUM_ADMIN_PASSWORD || undefined;
if (adminPassword !== undefined && [...adminPassword].length < MIN_PASSWORD_LENGTH) {
  console.error(`MUSEUM_ADMIN_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
  process.exit(1);
}

const dynamodb = await localDynamoDb();
Object.assign(process.env, handlerEnvironment(dynamodb.endpoint));
await ensureLocalTables(dynamodb.endpoint, localTableNames);
await ensureAdminUser();

const gateway = await startLocalApiGateway({
  port: Number(process.env.PORT ?? 3000),
  authorizerCacheTtlSeconds: Number(process.env.AUTHORIZER_CACHE_TTL_SECONDS ?? 300),
  corsAllowedOrigins: (process.env.CORS_ALLOWED_ORIGINS ?? '').split(',').filter(Boolean),
});
if (!inMemory) await recordRunningLocalApi({ pid: process.pid, url: gateway.url, dynamodbEndpoint: dynamodb.endpoint });
console.log(`Museum Special Events API listening on ${gateway.url}`);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  await gateway.close();
  await dynamodb.started?.stop();
  if (!inMemory) await forgetRunningLocalApi();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

/** On first start, user `admin` (editor) with MUSEUM_ADMIN_PASSWORD or a generated password printed once. */
async function ensureAdminUser(): Promise<void> {
  const users = new UsersStore(createDocumentClient(), localTableNames.events);
  if (await users.getUser('admin')) return;
  const password = adminPassword ?? randomBytes(18).toString('base64url');
  await users.putUser({ username: 'admin', role: 'editor', passwordHash: await hashPassword(password) }, 'create');
  console.log(
    adminPassword
      ? 'Created user admin (editor) with the password in MUSEUM_ADMIN_PASSWORD.'
      : `Created user admin (editor) with password: ${password}\n(shown only this once; change it with: npm run users -- passwd admin)`,
  );
}
