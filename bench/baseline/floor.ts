// The cold-start floor: a function that only builds the DynamoDB Document client and reads one
// item, bundled with the same esbuild settings as the real functions (scripts/build.ts).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export async function handler(event: { tableName: string; key: Record<string, string> }): Promise<{ statusCode: number }> {
  const { Item } = await client.send(new GetCommand({ TableName: event.tableName, Key: event.key, ConsistentRead: true }));
  return { statusCode: Item ? 200 : 404 };
}
