// API users: username, role and scrypt password hash, in the events table's USERS partition.
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Role } from '../routes.ts';
import { keys } from '../store/table-definition.ts';

export interface User {
  username: string;
  role: Role;
  passwordHash: string;
}

/**
 * RFC 7617: a user-id cannot contain a colon; we also keep it to a safe printable ASCII set, so a
 * name is compared exactly: no invisible character (BOM, zero-width space) nor another Unicode
 * form of the same letters can name a user.
 */
export const USERNAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;

export class UsersStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(client: DynamoDBDocumentClient, tableName: string) {
    this.client = client;
    this.tableName = tableName;
  }

  async getUser(username: string): Promise<User | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.user(username), ConsistentRead: true }));
    return Item ? { username: String(Item.username), role: Item.role as Role, passwordHash: String(Item.passwordHash) } : undefined;
  }

  /**
   * `mode` says whether the user must be new (add) or must exist already (passwd). The hash comes
   * from hashPassword(), which refuses a password passwordProblem() refuses; the name is checked here.
   */
  async putUser(user: User, mode: 'create' | 'replace'): Promise<void> {
    if (!USERNAME_PATTERN.test(user.username))
      throw new Error(`The username ${JSON.stringify(user.username)} is not letters, digits and . _ @ - (at most 64)`);
    if (!user.passwordHash.startsWith('scrypt$')) throw new Error('The password hash is not one of hashPassword()');
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.user(user.username), ...user, updatedAt: new Date().toISOString() },
        ConditionExpression: mode === 'create' ? 'attribute_not_exists(pk)' : 'attribute_exists(pk)',
      }),
    );
  }

  async deleteUser(username: string): Promise<void> {
    await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: keys.user(username), ConditionExpression: 'attribute_exists(pk)' }),
    );
  }

  async listUsers(): Promise<Omit<User, 'passwordHash'>[]> {
    const users: Omit<User, 'passwordHash'>[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :users',
          ExpressionAttributeValues: { ':users': keys.usersPartition },
          ProjectionExpression: 'username, #role',
          ExpressionAttributeNames: { '#role': 'role' },
          ExclusiveStartKey: exclusiveStartKey,
        }),
      );
      for (const item of page.Items ?? []) users.push({ username: String(item.username), role: item.role as Role });
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
    return users;
  }
}
