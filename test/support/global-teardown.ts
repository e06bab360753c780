import type { DynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import type { LocalApiProcess } from './local-api-process.ts';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { museumTestServices?: { api: LocalApiProcess; dynamodb: DynamoDbLocal } }).museumTestServices;
  await services?.api.stop();
  await services?.dynamodb.stop();
}
