// Everything that differs between production and a preview stack, read once from CDK context
// (`-c key=value` or cdk.json). `stage` names the stacks; any stage but `prod` is a short-lived
// preview: it is destroyed with its data, throttled lower and keeps its logs for less time.
import type { Node } from 'constructs';
import { authenticatedMethods } from '../../functions/routes.ts';
import { AUTHORIZER_IDENTITY } from '../../functions/unrouted-functions.ts';
import { authorizerEnvironments, FUNCTION_SETTINGS, METHOD_THROTTLING } from '../../functions/deployment.ts';
import { MUSEUM_SETTING_NAMES, MUSEUM_SETTINGS, museumSettingsFrom, type MuseumSettings } from '../../functions/events/museum-settings.ts';

export const PRODUCTION_STAGE = 'prod';

export interface StageConfig {
  /** `prod` or a preview name such as `pr-42`; also the API Gateway stage name. */
  stage: string;
  isProduction: boolean;
  /**
   * Requests per second and burst of EACH method, with or without credentials (the stage's default
   * method setting; API Gateway throttles per method). A flood at all the authenticated ones fits
   * the authorizer (authorizerFits()).
   */
  throttle: { rateLimit: number; burstLimit: number };
  logRetentionDays: number;
  /** How long API Gateway reuses an authorizer decision for the same Authorization header. */
  authorizerCacheTtlSeconds: number;
  /** Browser origins allowed to call the API; empty: no CORS at all. */
  corsOrigins: string[];
  /** IANA time zone that decides "today" for the list's default date range. */
  timeZone: string;
  /**
   * The museum the JSON-LD representation names (context `museumName`, `museumStreetAddress`,
   * `museumAddressLocality`, `museumPostalCode`, `museumAddressCountry`, `museumPriceCurrency`,
   * `museumEventPageUrl`: all or none); none: the reads offer JSON only (functions/events/museum-settings.ts).
   */
  museum: MuseumSettings | undefined;
  /** Alarms, their SNS topic and the dashboard (on in production, off in previews by default). */
  monitoring: boolean;
  /** Where alarms go: an e-mail subscribed to the stack's topic, or an existing topic (chat integrations). */
  alarmEmail: string | undefined;
  alarmTopicArn: string | undefined;
  /** The monthly cost budget (USD) whose actual or forecast spending notifies the alarm topic (with monitoring on). */
  monthlyCostBudgetUsd: number;
  /** p99 latency (ms) above which the latency alarm fires. */
  latencyP99AlarmMs: number;
  /** The WAF web ACL (per-IP rate limit, AWS managed rules, logging): on in production, opt out with `-c waf=false`. */
  waf: boolean;
  /** Requests per client IP per 5 minutes before the WAF blocks it. */
  wafRateLimitPer5Minutes: number;
  /** Requests per credential (Authorization header) per 5 minutes before the WAF blocks it. */
  wafCredentialRateLimitPer5Minutes: number;
  /**
   * Tables the stage uses instead of creating its own (a restore): context `eventsTableName`,
   * `idempotencyTableName`, and the attached events table's stream (context `eventsTableStreamArn`,
   * required with `eventsTableName`: the webhook consumer reads it).
   */
  existingTables: { events: string | undefined; eventsStreamArn: string | undefined; idempotency: string | undefined };
  /**
   * The attached tables are also declared in the stack, under their fixed names and retained, so
   * that a deploy with `--import-existing-resources` imports them and later deploys manage them
   * (context `manageAttachedTables`; docs/DEPLOY.md, "Restore").
   */
  manageAttachedTables: boolean;
  /** What is being deployed (CI passes the commit): in each function's description, so every release is a new version. */
  release: string | undefined;
  /** Optional custom domain: `https://<domainName>/v1.1` (certificate in the same region). */
  customDomain: { domainName: string; certificateArn: string } | undefined;
}

/**
 * Requests one client IP may send in five minutes before WAF blocks it: 10 requests/s on
 * average, 2% of one authenticated method's limit, so one address cannot hold a method's bucket
 * empty for longer than WAF takes to react. Sized for a museum's kiosk network behind one NAT
 * address: 50 kiosks each making a request every 5 seconds while visitors use them is 3,000 per 5
 * minutes.
 */
export const WAF_RATE_LIMIT_PER_5_MINUTES = 3000;

/**
 * The monthly cost budget's default: about what production costs serving a museum site with
 * 10,000 visitors an hour (docs/DEPLOY.md, "What it costs": about $265), with some margin. Set
 * `-c monthlyCostBudgetUsd=` to what you expect to spend.
 */
export const MONTHLY_COST_BUDGET_USD = 300;

/**
 * Requests one credential (one Authorization value, from any number of addresses) may send in
 * five minutes before WAF blocks it: 50 requests/s on average, a tenth of one authenticated
 * method's limit, for a partner's or a kiosk fleet's shared credential spread over many addresses.
 */
export const WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES = 15_000;

// Stack names allow [A-Za-z0-9-] and API Gateway stage names [A-Za-z0-9_-]: the intersection,
// lower case, short enough to keep generated resource names readable.
const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,30}$/;

type Context = Pick<Node, 'tryGetContext'>;

export function readStageConfig(node: Context): StageConfig {
  const stage = string(node, 'stage') ?? PRODUCTION_STAGE;
  if (!STAGE_PATTERN.test(stage)) {
    throw new Error(`Context "stage" must match ${STAGE_PATTERN} (e.g. prod or pr-42), not "${stage}"`);
  }
  const isProduction = stage === PRODUCTION_STAGE;
  const domainName = string(node, 'domainName');
  const certificateArn = string(node, 'certificateArn');
  if (Boolean(domainName) !== Boolean(certificateArn)) {
    throw new Error('Context "domainName" and "certificateArn" must be given together');
  }
  const events = tableName(node, 'eventsTableName');
  const existingTables = {
    events,
    eventsStreamArn: streamArn(string(node, 'eventsTableStreamArn'), events),
    idempotency: tableName(node, 'idempotencyTableName'),
  };
  const manageAttachedTables = boolean(node, 'manageAttachedTables', false);
  if (manageAttachedTables && !existingTables.events && !existingTables.idempotency) {
    throw new Error(
      'Context "manageAttachedTables" needs "eventsTableName" or "idempotencyTableName": it brings attached tables into the stack; ' +
        'without them the stack would create new, empty tables (docs/DEPLOY.md, "Restore")',
    );
  }
  const authorizerCacheTtlSeconds = integer(node, 'authorizerCacheTtlSeconds', AUTHORIZER_IDENTITY.defaultCacheTtlSeconds);
  if (authorizerCacheTtlSeconds > 3600) throw new Error('Context "authorizerCacheTtlSeconds" must be at most 3600');
  return {
    stage,
    isProduction,
    throttle: authorizerFits({
      rateLimit: integer(node, 'throttleRateLimit', METHOD_THROTTLING.api[isProduction ? 'production' : 'preview'].rateLimit),
      burstLimit: integer(node, 'throttleBurstLimit', METHOD_THROTTLING.api[isProduction ? 'production' : 'preview'].burstLimit),
    }),
    logRetentionDays: retentionDays(integer(node, 'logRetentionDays', isProduction ? 90 : 7)),
    authorizerCacheTtlSeconds,
    corsOrigins: list(node, 'corsOrigins'),
    timeZone: string(node, 'timeZone') ?? 'UTC',
    museum: museumSettingsFrom(
      Object.fromEntries(MUSEUM_SETTING_NAMES.map((name) => [name, string(node, MUSEUM_SETTINGS[name].context)])),
      (name) => `Context "${MUSEUM_SETTINGS[name].context}"`,
    ),
    monitoring: boolean(node, 'monitoring', isProduction),
    alarmEmail: email(string(node, 'alarmEmail')),
    alarmTopicArn: topicArn(string(node, 'alarmTopicArn')),
    latencyP99AlarmMs: integer(node, 'latencyP99AlarmMs', 2000),
    monthlyCostBudgetUsd: costBudget(integer(node, 'monthlyCostBudgetUsd', MONTHLY_COST_BUDGET_USD)),
    waf: boolean(node, 'waf', isProduction),
    wafRateLimitPer5Minutes: wafRateLimit(
      'wafRateLimitPer5Minutes',
      integer(node, 'wafRateLimitPer5Minutes', WAF_RATE_LIMIT_PER_5_MINUTES),
    ),
    wafCredentialRateLimitPer5Minutes: wafRateLimit(
      'wafCredentialRateLimitPer5Minutes',
      integer(node, 'wafCredentialRateLimitPer5Minutes', WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES),
    ),
    customDomain: domainName && certificateArn ? { domainName, certificateArn } : undefined,
    release: release(string(node, 'release')),
    existingTables,
    manageAttachedTables,
  };
}

/**
 * Refuses an authenticated-method throttle at which a flood of new credentials on every method
 * (authorizerEnvironments()) needs more environments than the authorizer reserves: over them Lambda
 * throttles the authorizer and clients get 503 (AUTHORIZER_FAILURE) instead of API Gateway's 429.
 */
function authorizerFits(throttle: { rateLimit: number; burstLimit: number }): { rateLimit: number; burstLimit: number } {
  const busy = authorizerEnvironments(throttle);
  const reserved = FUNCTION_SETTINGS.authorizer.reservedConcurrency;
  if (busy > reserved) {
    throw new Error(
      `Context "throttleRateLimit"/"throttleBurstLimit" (${throttle.rateLimit}/${throttle.burstLimit} per method, ${authenticatedMethods().length} authenticated methods) ` +
        `would keep ${busy} authorizer environments busy during a flood of new credentials, over its reserved concurrency of ${reserved}: ` +
        'raise the production limits in METHOD_THROTTLING (functions/deployment.ts), from which reservedConcurrency is computed, instead',
    );
  }
  return throttle;
}

// Context from the command line always arrives as a string; from cdk.json or tests it may be typed.
function string(node: Context, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`Context "${key}" must be a string`);
  return value;
}

function integer(node: Context, key: string, fallback: number): number {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'number' ? value : Number(value);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CDK context value (-c or cdk.json): any JSON at runtime, quoted in the error
  if (!Number.isInteger(number) || number < 0) throw new Error(`Context "${key}" must be a non-negative integer, not "${String(value)}"`);
  return number;
}

// The retention periods CloudWatch Logs accepts.
const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

function retentionDays(days: number): number {
  if (!RETENTION_DAYS.includes(days)) throw new Error(`Context "logRetentionDays" must be one of ${RETENTION_DAYS.join(', ')}`);
  return days;
}

function boolean(node: Context, key: string, fallback: boolean): boolean {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CDK context value (-c or cdk.json): any JSON at runtime, quoted in the error
  throw new Error(`Context "${key}" must be true or false, not "${String(value)}"`);
}

function email(value: string | undefined): string | undefined {
  if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
    throw new Error(`Context "alarmEmail": "${value}" is not an e-mail address`);
  return value;
}

function topicArn(value: string | undefined): string | undefined {
  if (value !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(value)) {
    throw new Error(`Context "alarmTopicArn": "${value}" is not an SNS topic ARN`);
  }
  return value;
}

// AWS WAF's bounds for a rate-based rule.
/** AWS Budgets refuses a budget of $0: a budget that notifies at once says nothing. */
function costBudget(usd: number): number {
  if (usd < 1) throw new Error('Context "monthlyCostBudgetUsd" must be a whole number of US dollars from 1');
  return usd;
}

function wafRateLimit(key: string, limit: number): number {
  if (limit < 10 || limit > 2_000_000_000) throw new Error(`Context "${key}" must be between 10 and 2,000,000,000`);
  return limit;
}

function list(node: Context, key: string): string[] {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return [];
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CDK context value (-c or cdk.json): any JSON at runtime, taken as text
  const items = Array.isArray(value) ? value : String(value).split(',');
  const origins = items.map((item) => String(item).trim()).filter(Boolean);
  for (const origin of origins) {
    // An allow-list, never a wildcard: the API answers authenticated requests.
    if (!/^https?:\/\/[^/*\s]+$/.test(origin))
      throw new Error(`Context "${key}": "${origin}" is not an origin like https://museum.example`);
  }
  return origins;
}

// A commit id or a tag: it goes into a Lambda description (at most 256 characters).
function release(value: string | undefined): string | undefined {
  if (value !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(value))
    throw new Error(`Context "release" must be a commit id or tag, not "${value}"`);
  return value;
}

// DynamoDB's rule for table names.
function tableName(node: Context, key: string): string | undefined {
  const value = string(node, key);
  if (value !== undefined && !/^[A-Za-z0-9_.-]{3,255}$/.test(value))
    throw new Error(`Context "${key}": "${value}" is not a DynamoDB table name`);
  return value;
}

// A DynamoDB stream ARN is the table's ARN and `/stream/<label>`
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html#Streams.Enabling).
// A restore does not carry the stream: the operator turns it on (NEW_IMAGE) and names it here, so
// the webhook consumer reads the attached table's changes (docs/DEPLOY.md, "Restore").
function streamArn(value: string | undefined, table: string | undefined): string | undefined {
  if (table === undefined) {
    if (value !== undefined)
      throw new Error('Context "eventsTableStreamArn" is the stream of an attached table: give "eventsTableName" too');
    return undefined;
  }
  if (value === undefined) {
    throw new Error(
      `Context "eventsTableName" needs "eventsTableStreamArn", the stream (NEW_IMAGE) of ${table} that the webhook consumer reads (docs/DEPLOY.md, "Restore")`,
    );
  }
  const escaped = table.replace(/[.]/g, '\\.');
  if (!new RegExp(`^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\\d{12}:table/${escaped}/stream/[^/\\s]+$`).test(value)) {
    throw new Error(
      `Context "eventsTableStreamArn": "${value}" is not a stream ARN of ${table} (arn:aws:dynamodb:<region>:<account>:table/${table}/stream/<label>)`,
    );
  }
  return value;
}
