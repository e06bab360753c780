// Least privilege, written down per function: the DynamoDB actions each bundle really calls
// (read off functions/store/events-store.ts, indexed-write.ts, month-index-reader.ts and users-store.ts), and nothing else. TransactWriteItems needs no action of its own: each Put,
// Update and Delete inside it is authorised as PutItem, UpdateItem and DeleteItem.
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AUTHORIZER_HANDLER } from '../../functions/routes.ts';
import { MONTH_END_INDEX, MONTH_INDEX, keys } from '../../functions/store/table-definition.ts';

export interface DataAccess {
  /** Item actions on the events table, limited to the partitions in `partitions`. */
  events?: { actions: string[]; partitions: 'events' | 'users' };
  /** Actions on the byMonth and byMonthEnd indexes (event ids, names and dates, nothing else). */
  dateIndex?: string[];
  /** Actions on the idempotency table. */
  idempotency?: string[];
}

export const DATA_ACCESS: Record<string, DataAccess> = {
  // TransactWriteItems of Puts (the event, its month items and, with an Idempotency-Key, its
  // idempotency record, all conditioned); GetItem of the record when the key was already used; a
  // UpdateItem creating a marker (the fence) when the commit's outcome is unclear.
  'create-special-event': {
    events: { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: 'events' },
    idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
  },
  // Query of the byMonth index (and of byMonthEnd for a range starting after a month's 1st), then BatchGetItem of the page's base items; a conditional DeleteItem
  // of each index item it meets that an unfinished write of more than ~48 months left behind (rare).
  // IAM can limit the partition key only, so the grant covers base items too; every delete the list
  // sends is conditioned on the exact index key it read (`gsi1sk = :seen`), which no base item has.
  'list-special-events': {
    events: { actions: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem'], partitions: 'events' },
    dateIndex: ['dynamodb:Query'],
  },
  'get-special-event': { events: { actions: ['dynamodb:GetItem'], partitions: 'events' } },
  // A change of location, description or price: one UpdateItem. A change of name or dates: GetItem
  // of the current version, then TransactWriteItems of Update, Deletes and Puts (UpdateItem also
  // takes a large write's lease and sets the fence). With an Idempotency-Key: GetItem and PutItem
  // (in the commit's transaction) of its record.
  'update-special-event': {
    events: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'], partitions: 'events' },
    idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
  },
  // GetItem of the current version, then TransactWriteItems of Deletes; UpdateItem for the lease
  // and the fence; the Idempotency-Key's record as for update.
  'delete-special-event': {
    events: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], partitions: 'events' },
    idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
  },
  // GetItem of USERS / USER#<name>.
  [AUTHORIZER_HANDLER]: { events: { actions: ['dynamodb:GetItem'], partitions: 'users' } },
};

/**
 * dynamodb:LeadingKeys confines each function to its own partitions: the event handlers cannot
 * read the password hashes in the USERS partition, and the authorizer can read nothing else.
 */
const LEADING_KEYS = {
  events: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.event('*').pk] } },
  users: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keys.usersPartition] } },
} as const;

export function dataAccessStatements(
  functionName: string,
  tables: { events: ITableV2; idempotency: ITableV2 },
): iam.PolicyStatement[] {
  const access = DATA_ACCESS[functionName];
  if (!access) throw new Error(`No data access is declared for the function ${functionName}`);
  const statements: iam.PolicyStatement[] = [];
  if (access.events) {
    statements.push(
      new iam.PolicyStatement({
        actions: access.events.actions,
        resources: [tables.events.tableArn],
        conditions: LEADING_KEYS[access.events.partitions],
      }),
    );
  }
  if (access.dateIndex) {
    statements.push(
      new iam.PolicyStatement({
        actions: access.dateIndex,
        resources: [MONTH_INDEX, MONTH_END_INDEX].map((index) => `${tables.events.tableArn}/index/${index}`),
      }),
    );
  }
  if (access.idempotency) {
    statements.push(new iam.PolicyStatement({ actions: access.idempotency, resources: [tables.idempotency.tableArn] }));
  }
  return statements;
}
