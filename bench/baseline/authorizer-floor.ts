// The authorizer's cold-start floor: the least an authorizer must do on its first call, i.e.
// build the Document client, read the user, and verify the password once with scrypt
// (functions/auth/passwords.ts), bundled with the same esbuild settings as the functions.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { verifyPassword } from '../../functions/auth/passwords.ts';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export async function handler(event: {
  tableName: string;
  key: Record<string, string>;
  password: string;
}): Promise<{ principalId?: string }> {
  const { Item } = await client.send(new GetCommand({ TableName: event.tableName, Key: event.key, ConsistentRead: true }));
  const valid = await verifyPassword(event.password, Item?.passwordHash as string | undefined);
  return valid ? { principalId: String(Item?.username) } : {};
}
