// The authorizer's cold-start floor: the least an authorizer must do on its first call, i.e.
// build the Document client, read the user's item (one GetItem) and check the credential's keyed
// hash once (functions/auth/credentials.ts), bundled with the same esbuild settings as the
// functions. The key comes in the event: the floor reads one item, nothing else (the authorizer
// reads its key from Secrets Manager too, alongside the item).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { parseCredentialKeys, verifyCredential } from '../../functions/auth/credentials.ts';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export async function handler(event: {
  tableName: string;
  key: Record<string, string>;
  password: string;
  credentialKeys: string;
}): Promise<{ principalId?: string }> {
  const { Item } = await client.send(new GetCommand({ TableName: event.tableName, Key: event.key }));
  const valid = verifyCredential(event.password, Item?.passwordHash as string | undefined, parseCredentialKeys(event.credentialKeys));
  return valid ? { principalId: String(Item?.username) } : {};
}
