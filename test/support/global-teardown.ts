import type { DynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import type { FaultProxy } from '../../bench/support/fault-proxy.ts';
import type { LocalApiProcess } from './local-api-process.ts';
import { removeRunScratch } from './run-scratch.ts';

export default async function globalTeardown(): Promise<void> {
  const services = (
    globalThis as { museumTestServices?: { apis: (LocalApiProcess | undefined)[]; proxy: FaultProxy | undefined; dynamodb: DynamoDbLocal } }
  ).museumTestServices;
  await Promise.all((services?.apis ?? []).map(async (api) => api?.stop()));
  await services?.proxy?.close();
  await services?.dynamodb.stop();
  await removeRunScratch();
}
