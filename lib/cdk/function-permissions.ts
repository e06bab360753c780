// Least privilege per function, as IAM statements: the grants are declared with each route in
// functions/routes.ts (the authorizer's and the webhook functions' in functions/unrouted-functions.ts); this module only turns
// them into policy statements confined to the tables, indexes, partitions and secret they name.
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { routes, type DataAccess } from '../../functions/routes.ts';
import { AUTHORIZER_GRANTS, AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { CHANGE_ITEM } from '../../functions/changes/change-event.ts';
import { SECRET_ENCRYPTION_CONTEXT_KEY, WEBHOOK_KEYS } from '../../functions/webhooks/subscription-rules.ts';
import { CALENDAR_KEYS } from '../../functions/calendar/feed-rules.ts';
import { MONTH_END_INDEX, MONTH_INDEX, keys } from '../../functions/store/table-definition.ts';

/** Each function's grants, by bundle name: the route table's rows, and the authorizer's. */
export const DATA_ACCESS: Readonly<Record<string, DataAccess>> = Object.fromEntries([
  ...routes.map((route): [string, DataAccess] => [route.handler, route.grants]),
  [AUTHORIZER_HANDLER, AUTHORIZER_GRANTS],
  ...Object.values(WEBHOOK_FUNCTIONS).map((fn): [string, DataAccess] => [fn.handler, fn.grants]),
]);

/**
 * dynamodb:LeadingKeys confines each function to its own partitions: the event handlers cannot
 * read the credential hashes in the users' items (USER#<name>), the authorizer can read nothing
 * else (not even the users directory, USERS), and the change feed reads only the change
 * partitions (which the writers may only put into).
 */
export const LEADING_KEY_PATTERNS = {
  events: [keys.event('*').pk],
  users: [keys.userPartitions],
  changes: [`${CHANGE_ITEM.pkPrefix}*`],
  webhooks: [...WEBHOOK_KEYS.leadingKeys],
  calendarFeeds: [...CALENDAR_KEYS.leadingKeys],
} as const satisfies Record<string, readonly string[]>;

const leadingKeys = (partitions: keyof typeof LEADING_KEY_PATTERNS) => ({
  'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...LEADING_KEY_PATTERNS[partitions]] },
});

/**
 * Encrypt and Decrypt with the secrets key only under the context the code always passes (the
 * subscription's id, functions/webhooks/webhook-secrets.ts) and no other key: a function's role
 * cannot decrypt a ciphertext outside a subscription, nor encrypt one for no subscription.
 * `kms:EncryptionContext:<key>` is absent from a request without that key, so StringLike fails on
 * it; ForAllValues on `kms:EncryptionContextKeys` refuses any other key
 * (https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html#conditions-kms-encryption-context).
 * Subscription ids are `wh_` and 22 characters (SUBSCRIPTION_ID_PATTERN).
 */
const SECRET_CONTEXT = {
  StringLike: { [`kms:EncryptionContext:${SECRET_ENCRYPTION_CONTEXT_KEY}`]: 'wh_*' },
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [SECRET_ENCRYPTION_CONTEXT_KEY] },
};

/** The webhook pipeline's queue and key, for the functions granted `deliveryQueue` or `secretsKey`. */
export interface WebhookResources {
  queueArn: string;
  keyArn: string;
}

export function dataAccessStatements(
  functionName: string,
  resources: { events: ITableV2; idempotency: ITableV2; credentialKeys: ISecret },
  webhooks?: WebhookResources,
): iam.PolicyStatement[] {
  const access = DATA_ACCESS[functionName];
  if (!access) throw new Error(`No data access is declared for the function ${functionName}`);
  const statements: iam.PolicyStatement[] = [];
  if (access.events) {
    statements.push(
      new iam.PolicyStatement({
        actions: [...access.events.actions],
        resources: [resources.events.tableArn],
        conditions: leadingKeys(access.events.partitions),
      }),
    );
  }
  if (access.dateIndex) {
    statements.push(
      new iam.PolicyStatement({
        actions: [...access.dateIndex],
        resources: [MONTH_INDEX, MONTH_END_INDEX].map((index) => `${resources.events.tableArn}/index/${index}`),
      }),
    );
  }
  if (access.changes) {
    statements.push(
      new iam.PolicyStatement({ actions: [...access.changes], resources: [resources.events.tableArn], conditions: leadingKeys('changes') }),
    );
  }
  if (access.calendarFeeds) {
    statements.push(
      new iam.PolicyStatement({
        actions: [...access.calendarFeeds],
        resources: [resources.events.tableArn],
        conditions: leadingKeys('calendarFeeds'),
      }),
    );
  }
  if (access.idempotency) {
    statements.push(new iam.PolicyStatement({ actions: [...access.idempotency], resources: [resources.idempotency.tableArn] }));
  }
  if (access.credentialKeys) {
    statements.push(new iam.PolicyStatement({ actions: [...access.credentialKeys], resources: [resources.credentialKeys.secretArn] }));
  }
  if (access.deliveryQueue || access.secretsKey) {
    if (!webhooks) throw new Error(`The function ${functionName} needs the webhook queue and key`);
    if (access.deliveryQueue)
      statements.push(new iam.PolicyStatement({ actions: [...access.deliveryQueue], resources: [webhooks.queueArn] }));
    if (access.secretsKey) {
      statements.push(
        new iam.PolicyStatement({ actions: [...access.secretsKey], resources: [webhooks.keyArn], conditions: SECRET_CONTEXT }),
      );
    }
  }
  return statements;
}
