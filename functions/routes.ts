// The route table: everything about each route (operation, method and path, handler, role,
// success status and the DynamoDB actions its function is granted). The local API, the
// authorizer's policy, the CDK stack (functions, IAM, API Gateway) and the OpenAPI document are
// all built from this list. The document's text and examples for each route, which the Lambda
// bundles do not need, are keyed by its operationId in lib/openapi/operations.ts.

/**
 * Roles, least first. A partner is a viewer that also manages its own webhook subscriptions;
 * editors see and manage all of them (the handlers check ownership: functions/webhooks/).
 */
export type Role = 'viewer' | 'partner' | 'editor';
export const ROLES: readonly Role[] = ['viewer', 'partner', 'editor'];

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A route; `Id` narrows its operationId to those of the route table (OperationId) in `routes`. */
export interface Route<Id extends string = string> {
  operationId: Id;
  method: HttpMethod;
  /** API Gateway resource path, relative to the base path `/v1.1`. */
  path: string;
  /** Bundle name: functions/<handler>.ts builds to dist/functions/<handler>/index.mjs. */
  handler: string;
  /** The least role that may call the route (unused for a route without credentials). */
  role: Role;
  /**
   * `none`: a method without credentials (API Gateway authorization NONE): the authorizer is not
   * called and the handler checks what the request carries itself (a calendar feed's secret
   * token). Absent: behind the Basic-auth authorizer.
   */
  authorization?: 'none';
  summary: string;
  successStatus: 200 | 201 | 202 | 204;
  /** The DynamoDB access of its function; lib/cdk/function-permissions.ts turns it into IAM statements. */
  grants: DataAccess;
}

/**
 * Least privilege, written down per function: the DynamoDB actions its bundle really calls (read
 * off functions/store/ and functions/auth/users-store.ts), and nothing else. TransactWriteItems
 * needs no action of its own: each Put, Update and Delete inside it is authorised as PutItem,
 * UpdateItem and DeleteItem.
 */
export interface DataAccess {
  /** Item actions on the events table, limited to the partitions in `partitions`. */
  events?: { actions: readonly string[]; partitions: 'events' | 'users' | 'webhooks' };
  /** Actions on the byMonth and byMonthEnd indexes (event ids, names and dates, nothing else). */
  dateIndex?: readonly string[];
  /** Actions on the idempotency table. */
  idempotency?: readonly string[];
  /** Item actions on the events table's change partitions (`CHANGES#…`, the change feed) only. */
  changes?: readonly string[];
  /** Actions on the credential keys' secret (functions/auth/credential-keys.ts). */
  credentialKeys?: readonly string[];
  /** SQS actions on the webhook delivery queue (lib/cdk/webhook-pipeline.ts). */
  deliveryQueue?: readonly string[];
  /** KMS actions with the key that encrypts webhook secrets. */
  secretsKey?: readonly string[];
  /** Item actions on the events table's calendar feed partitions (`CALENDAR#…`, functions/calendar/) only. */
  calendarFeeds?: readonly string[];
}

export const BASE_PATH = '/v1.1';
export const API_VERSION = '1.1.1';

const ROUTE_TABLE = [
  {
    operationId: 'createSpecialEvent',
    method: 'POST',
    path: '/special-events',
    handler: 'create-special-event',
    role: 'editor',
    summary: 'Create special event',
    successStatus: 201,
    // TransactWriteItems of Puts (the event, its month items and, with an Idempotency-Key, its
    // idempotency record); GetItem of the record when the key was already used; an UpdateItem
    // leaving a marker at the new id (the fence) when the commit's outcome is unclear; the Put of
    // its change item.
    grants: {
      events: { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: 'events' },
      idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      changes: ['dynamodb:PutItem'],
    },
  },
  {
    operationId: 'listSpecialEvents',
    method: 'GET',
    path: '/special-events',
    handler: 'list-special-events',
    role: 'viewer',
    summary: 'List special events',
    successStatus: 200,
    // Query of the byMonth index (and of byMonthEnd for a range starting after a month's 1st),
    // then BatchGetItem of the page's base items. Reads only.
    grants: {
      events: { actions: ['dynamodb:BatchGetItem'], partitions: 'events' },
      dateIndex: ['dynamodb:Query'],
    },
  },
  {
    operationId: 'getSpecialEvent',
    method: 'GET',
    path: '/special-events/{eventId}',
    handler: 'get-special-event',
    role: 'viewer',
    summary: 'Get special event',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:GetItem'], partitions: 'events' } },
  },
  {
    operationId: 'updateSpecialEvent',
    method: 'PATCH',
    path: '/special-events/{eventId}',
    handler: 'update-special-event',
    role: 'editor',
    summary: 'Update special event',
    successStatus: 200,
    // GetItem of the current version, then TransactWriteItems of the base item's Put, the month
    // items' Puts and Deletes and, with an Idempotency-Key, its record's Put (GetItem of the record
    // when the key was used); UpdateItem sets the fence when the commit's outcome is unclear; the
    // Put of its change item.
    grants: {
      events: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], partitions: 'events' },
      idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      changes: ['dynamodb:PutItem'],
    },
  },
  {
    operationId: 'deleteSpecialEvent',
    method: 'DELETE',
    path: '/special-events/{eventId}',
    handler: 'delete-special-event',
    role: 'editor',
    summary: 'Delete special event',
    successStatus: 204,
    // GetItem of the current version, then TransactWriteItems of Deletes; UpdateItem for the
    // fence; the Idempotency-Key's record and the change item as for update.
    grants: {
      events: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], partitions: 'events' },
      idempotency: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      changes: ['dynamodb:PutItem'],
    },
  },
  {
    operationId: 'listSpecialEventChanges',
    method: 'GET',
    // A literal segment beside `{eventId}`: API Gateway (and matchRoute) prefer it.
    path: '/special-events/changes',
    handler: 'list-special-event-changes',
    role: 'viewer',
    summary: 'List changes to special events',
    successStatus: 200,
    // Query of the change partitions (strongly consistent), nothing else.
    grants: { changes: ['dynamodb:Query'] },
  },
  // Webhook subscriptions (functions/webhooks/): a partner manages its own, an editor all. Each
  // reads and writes the WEBHOOKS partition (subscriptions and the per-owner count) and the
  // WEBHOOK#<id> partitions (recent delivery attempts).
  {
    operationId: 'createWebhookSubscription',
    method: 'POST',
    path: '/webhook-subscriptions',
    handler: 'create-webhook-subscription',
    role: 'partner',
    summary: 'Create webhook subscription',
    successStatus: 201,
    // TransactWriteItems of the subscription's Put and the owner count's Update; KMS Encrypt of the new secret.
    grants: {
      events: { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: 'webhooks' },
      secretsKey: ['kms:Encrypt'],
    },
  },
  {
    operationId: 'listWebhookSubscriptions',
    method: 'GET',
    path: '/webhook-subscriptions',
    handler: 'list-webhook-subscriptions',
    role: 'partner',
    summary: 'List webhook subscriptions',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:Query'], partitions: 'webhooks' } },
  },
  {
    operationId: 'getWebhookSubscription',
    method: 'GET',
    path: '/webhook-subscriptions/{subscriptionId}',
    handler: 'get-webhook-subscription',
    role: 'partner',
    summary: 'Get webhook subscription',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:GetItem'], partitions: 'webhooks' } },
  },
  {
    operationId: 'deleteWebhookSubscription',
    method: 'DELETE',
    path: '/webhook-subscriptions/{subscriptionId}',
    handler: 'delete-webhook-subscription',
    role: 'partner',
    summary: 'Delete webhook subscription',
    successStatus: 204,
    // GetItem (ownership), then TransactWriteItems of the Delete and the owner count's Update.
    grants: { events: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], partitions: 'webhooks' } },
  },
  {
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: '/webhook-subscriptions/{subscriptionId}/secret',
    handler: 'rotate-webhook-secret',
    role: 'partner',
    summary: 'Rotate webhook secret',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], partitions: 'webhooks' }, secretsKey: ['kms:Encrypt'] },
  },
  {
    operationId: 'replayWebhookChanges',
    method: 'POST',
    path: '/webhook-subscriptions/{subscriptionId}/replay',
    handler: 'replay-webhook-changes',
    role: 'partner',
    summary: 'Replay changes to a webhook subscription',
    successStatus: 202,
    // GetItem of the subscription; the change feed's reader (Query of the CHANGES# partitions:
    // functions/store/change-feed-reader.ts); SendMessageBatch.
    grants: {
      events: { actions: ['dynamodb:GetItem'], partitions: 'webhooks' },
      changes: ['dynamodb:Query'],
      deliveryQueue: ['sqs:SendMessage'],
    },
  },
  {
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: '/webhook-subscriptions/{subscriptionId}/deliveries',
    handler: 'list-webhook-deliveries',
    role: 'partner',
    summary: 'List recent webhook deliveries',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:GetItem', 'dynamodb:Query'], partitions: 'webhooks' } },
  },
  {
    operationId: 'enableWebhookSubscription',
    method: 'POST',
    path: '/webhook-subscriptions/{subscriptionId}/enable',
    handler: 'enable-webhook-subscription',
    role: 'partner',
    summary: 'Enable webhook subscription',
    successStatus: 200,
    grants: { events: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], partitions: 'webhooks' } },
  },
  // Calendar feeds (functions/calendar/): any user subscribes a calendar app to the upcoming dates
  // through a secret URL. Each feed is two items in the CALENDAR# partitions (the token's keyed
  // hash, the owner's entry) and the owner's count beside them.
  {
    operationId: 'createCalendarFeed',
    method: 'POST',
    path: '/calendar-feeds',
    handler: 'create-calendar-feed',
    role: 'viewer',
    summary: 'Create calendar feed',
    successStatus: 201,
    // TransactWriteItems of the two Puts and the owner count's Update; the credential keys for the token's hash.
    grants: { calendarFeeds: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], credentialKeys: ['secretsmanager:GetSecretValue'] },
  },
  {
    operationId: 'listCalendarFeeds',
    method: 'GET',
    path: '/calendar-feeds',
    handler: 'list-calendar-feeds',
    role: 'viewer',
    summary: 'List calendar feeds',
    successStatus: 200,
    grants: { calendarFeeds: ['dynamodb:Query'] },
  },
  {
    operationId: 'deleteCalendarFeed',
    method: 'DELETE',
    path: '/calendar-feeds/{feedId}',
    handler: 'delete-calendar-feed',
    role: 'viewer',
    summary: 'Revoke calendar feed',
    successStatus: 204,
    // GetItem of the owner's entry, then TransactWriteItems of the two Deletes and the count's Update.
    grants: { calendarFeeds: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'] },
  },
  {
    operationId: 'getCalendarFeed',
    method: 'GET',
    // The secret is the `token` query parameter: neither access log records a query string
    // (docs/API.md, "Calendar feeds").
    path: '/calendar.ics',
    handler: 'get-calendar-feed',
    role: 'viewer',
    authorization: 'none',
    summary: 'Calendar of upcoming dates (iCalendar)',
    successStatus: 200,
    // GetItem of the feed by its token's hash and UpdateItem of its request counter; the list's
    // reads (byMonth Query, BatchGetItem); the change feed's Query (cancellations); the credential keys.
    grants: {
      events: { actions: ['dynamodb:BatchGetItem'], partitions: 'events' },
      dateIndex: ['dynamodb:Query'],
      changes: ['dynamodb:Query'],
      calendarFeeds: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      credentialKeys: ['secretsmanager:GetSecretValue'],
    },
  },
] as const satisfies readonly Route[];

export const routes: readonly Route<OperationId>[] = ROUTE_TABLE;

/** The operationIds of the route table: a table keyed by operation must have exactly these keys. */
export type OperationId = (typeof ROUTE_TABLE)[number]['operationId'];

/** Request headers a browser may send cross-origin: the preflight answers and the handlers agree. */
export const CORS_REQUEST_HEADERS = 'Authorization,Content-Type,If-Match,If-None-Match,Idempotency-Key';
/** Response headers a cross-origin page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = 'ETag,Location,Retry-After,Link,Allow';

/** Whether the route's methods are behind the authorizer. */
export function isAuthenticated(route: Route): boolean {
  return route.authorization !== 'none';
}

/** The API Gateway methods behind the authorizer: every authenticated route's methods (HEAD with GET). */
export function authenticatedMethods(): string[] {
  return routes.filter(isAuthenticated).flatMap((route) => routeMethods(route).map((method) => `${method} ${route.path}`));
}

export function roleAllows(userRole: Role, routeRole: Role): boolean {
  return ROLES.indexOf(userRole) >= ROLES.indexOf(routeRole);
}

/** `/special-events/{eventId}` -> `/special-events/*`, the form used in execute-api ARNs. */
export function arnResourcePath(path: string): string {
  return path.replace(/\{[^}]+\}/g, '*');
}

/** The methods a route answers: HEAD is served by the GET route's handler (locally and deployed). */
export function routeMethods(route: Route): string[] {
  return route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
}
