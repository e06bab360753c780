// API users in the events table: each user's own item (`USER#<name>`: role and credential hash),
// the only item the authorizer reads, and a directory entry (`USERS` / `USER#<name>`: role and key
// id, no hash) for listing, written together in one transaction (functions/store/README.md, "Users").
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { credentialKeyId } from './credentials.ts';
import type { Role } from '../routes.ts';
import { keys } from '../store/table-definition.ts';
import { TableStore } from '../store/table-store.ts';

export interface User {
  username: string;
  role: Role;
  passwordHash: string;
}

/** A user as the directory lists it; `keyId` is absent for a user stored by an older release (scrypt: `users migrate`). */
export interface DirectoryEntry {
  username: string;
  role: Role;
  keyId?: string;
}

/**
 * RFC 7617: a user-id cannot contain a colon; we also keep it to a safe printable ASCII set, so a
 * name is compared exactly: no invisible character (BOM, zero-width space) nor another Unicode
 * form of the same letters can name a user.
 */
export const USERNAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * How a put treats what is there: `create` a new user; `replace` the credential or role of one
 * that exists; `migrate` one stored by an older release (a directory entry holding a scrypt hash).
 */
export type PutMode = 'create' | 'replace' | 'migrate';

/** The users and their directory; no signal (the authorizer and the users CLI read and write without one). */
export class UsersStore extends TableStore {
  /**
   * The user's own item, eventually consistent: half the read cost, and twice the reads a second
   * one item serves (a new user or credential is seen within about a second).
   */
  async getUser(username: string): Promise<User | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.user(username) }));
    return Item ? { username: String(Item.username), role: Item.role as Role, passwordHash: String(Item.passwordHash) } : undefined;
  }

  /**
   * Writes the user's item and directory entry in one transaction. The hash must be a keyed hash
   * (hashCredential); the name is checked here. A condition that fails (`create` of a user that
   * exists, `replace` or `migrate` of one that does not) is a ConditionalCheckFailedException.
   */
  async putUser(user: User, mode: PutMode): Promise<void> {
    if (!USERNAME_PATTERN.test(user.username))
      throw new Error(`The username ${JSON.stringify(user.username)} is not letters, digits and . _ @ - (at most 64)`);
    const keyId = credentialKeyId(user.passwordHash);
    if (keyId === undefined) throw new Error('The password hash is not one of hashCredential()');
    const updatedAt = new Date().toISOString();
    const entryCondition = {
      create: 'attribute_not_exists(pk)',
      replace: 'attribute_exists(pk)',
      migrate: 'attribute_exists(passwordHash)',
    }[mode];
    await this.transact([
      {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.user(user.username), username: user.username, role: user.role, passwordHash: user.passwordHash, updatedAt },
          ConditionExpression: mode === 'replace' ? 'attribute_exists(pk)' : 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.userDirectoryEntry(user.username), username: user.username, role: user.role, keyId, updatedAt },
          ConditionExpression: entryCondition,
        },
      },
    ]);
  }

  /** Removes the user (of either model); a ConditionalCheckFailedException when there is none. */
  async deleteUser(username: string): Promise<void> {
    await this.transact([
      { Delete: { TableName: this.tableName, Key: keys.user(username) } },
      { Delete: { TableName: this.tableName, Key: keys.userDirectoryEntry(username), ConditionExpression: 'attribute_exists(pk)' } },
    ]);
  }

  /** The directory, in name order (no hashes are read). */
  async listUsers(): Promise<DirectoryEntry[]> {
    const users: DirectoryEntry[] = [];
    const items = this.queryEveryItem({
      KeyConditionExpression: 'pk = :users',
      ExpressionAttributeValues: { ':users': keys.usersDirectory },
      ProjectionExpression: 'username, #role, keyId',
      ExpressionAttributeNames: { '#role': 'role' },
    });
    for await (const item of items) {
      users.push({
        username: String(item.username),
        role: item.role as Role,
        ...(typeof item.keyId === 'string' ? { keyId: item.keyId } : {}),
      });
    }
    return users;
  }

  private async transact(items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>): Promise<void> {
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (
        error instanceof TransactionCanceledException &&
        error.CancellationReasons?.some((reason) => reason.Code === 'ConditionalCheckFailed')
      )
        throw new ConditionalCheckFailedException({ message: 'The user is not as the command expects', $metadata: error.$metadata });
      throw error;
    }
  }
}
