// Every environment variable the README's configuration table documents, checked once when a
// local command starts and before it creates anything (no data directory, no DynamoDB Local): a
// bad value is refused with one line that names the variable and what it accepts. The rules are
// valibot schemas over the raw strings; an empty value counts as unset, as a shell's `VAR=` reads.
import * as v from 'valibot';
import { isTimeZone } from '../../functions/events/calendar-dates.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from '../../functions/auth/passwords.ts';

/** What one variable accepts: its rule and how to say it in the refusal. */
interface Rule {
  schema: v.GenericSchema<string, unknown>;
  accepted: string;
}

const integerFrom = (minimum: number, maximum: number) =>
  v.pipe(
    v.string(),
    v.regex(/^[0-9]{1,10}$/),
    v.check((text) => Number(text) >= minimum && Number(text) <= maximum),
  );

const oneOf = (...values: string[]): Rule => ({ schema: v.picklist(values), accepted: values.join(' or ') });

/** An origin as a browser sends it: scheme, host and an optional port; never a wildcard, a path or `null` (the CDK stage's rule too). */
const ORIGIN = /^https?:\/\/[^/*\s,]+$/;

/** DynamoDB's table name rule: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html */
const TABLE_NAME: Rule = {
  schema: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{3,255}$/)),
  accepted: 'a DynamoDB table name (3 to 255 letters, digits, _ . -)',
};

export const SETTINGS = {
  PORT: { schema: integerFrom(0, 65_535), accepted: 'a port number from 0 to 65535 (0: any free port)' },
  MUSEUM_DYNAMODB_PORT: { schema: integerFrom(0, 65_535), accepted: 'a port number from 0 to 65535 (0 or unset: any free port)' },
  MUSEUM_ADMIN_PASSWORD: {
    schema: v.pipe(
      v.string(),
      v.check((password) => passwordProblem(password) === undefined),
    ),
    accepted: `a password of ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters without control or invisible format characters`,
  },
  MUSEUM_IN_MEMORY: oneOf('1', '0'),
  MUSEUM_IN_MEMORY_MAX_MB: {
    schema: v.pipe(
      v.string(),
      v.regex(/^[0-9]+(\.[0-9]+)?$/),
      v.check((text) => Number(text) > 0),
    ),
    accepted: 'a positive number of megabytes',
  },
  MUSEUM_BUNDLES_DIR: { schema: v.string(), accepted: 'a directory' },
  MUSEUM_DATA_DIR: { schema: v.string(), accepted: 'a directory' },
  MUSEUM_LOG_FORMAT: oneOf('text', 'json'),
  DYNAMODB_ENDPOINT: {
    schema: v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s]+\/?$/)),
    accepted: 'the URL of a DynamoDB endpoint, like http://127.0.0.1:8000',
  },
  MUSEUM_DYNAMODB_KEY_ID: {
    schema: v.pipe(v.string(), v.regex(/^[A-Za-z0-9]+$/)),
    accepted: 'letters and digits only (DynamoDB Local names its file after it)',
  },
  MUSEUM_THROTTLE_RATE_LIMIT: {
    schema: v.pipe(
      v.string(),
      v.regex(/^[0-9]+(\.[0-9]+)?$/),
      v.check((text) => Number(text) > 0),
    ),
    accepted: 'requests per second above 0, with MUSEUM_THROTTLE_BURST_LIMIT',
  },
  MUSEUM_THROTTLE_BURST_LIMIT: {
    schema: integerFrom(1, 1_000_000_000),
    accepted: 'a whole number from 1, with MUSEUM_THROTTLE_RATE_LIMIT',
  },
  // API Gateway's authorizer result TTL is 0 to 3600 seconds:
  // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-authorizer.html (AuthorizerResultTtlInSeconds)
  AUTHORIZER_CACHE_TTL_SECONDS: { schema: integerFrom(0, 3_600), accepted: 'a whole number of seconds from 0 to 3600, as on API Gateway' },
  MUSEUM_TIME_ZONE: { schema: v.pipe(v.string(), v.check(isTimeZone)), accepted: 'an IANA time zone, like Europe/Paris or UTC' },
  AUTH_CACHE_TTL_SECONDS: { schema: integerFrom(0, 3_600), accepted: 'a whole number of seconds from 0 to 3600' },
  CORS_ALLOWED_ORIGINS: {
    schema: v.pipe(
      v.string(),
      v.check((text) => text.split(',').every((origin) => ORIGIN.test(origin.trim()))),
    ),
    accepted: 'comma-separated browser origins like https://museum.example,http://localhost:5173 (never * or null)',
  },
  // Powertools' levels: https://docs.powertools.aws.dev/lambda/typescript/latest/features/logger/#log-levels
  POWERTOOLS_LOG_LEVEL: {
    schema: v.pipe(
      v.string(),
      v.transform((level) => level.toUpperCase()),
      v.picklist(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT']),
    ),
    accepted: 'TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL or SILENT',
  },
  POWERTOOLS_METRICS_DISABLED: oneOf('true', 'false'),
  MUSEUM_WEBHOOK_RETRY_SCALE: {
    schema: v.pipe(
      v.string(),
      v.regex(/^(0|1)?(\.[0-9]+)?$/),
      v.check((text) => Number(text) > 0 && Number(text) <= 1),
    ),
    accepted: 'a number greater than 0 and at most 1 (the share of each webhook retry delay the local run waits)',
  },
  TABLE_NAME,
  IDEMPOTENCY_TABLE_NAME: TABLE_NAME,
} satisfies Record<string, Rule>;

export type SettingName = keyof typeof SETTINGS;

/** What the local store's users (the users and events CLIs) read. */
export const STORE_SETTINGS: SettingName[] = [
  'MUSEUM_DATA_DIR',
  'MUSEUM_IN_MEMORY',
  'DYNAMODB_ENDPOINT',
  'MUSEUM_DYNAMODB_KEY_ID',
  'MUSEUM_DYNAMODB_PORT',
  'TABLE_NAME',
  'IDEMPOTENCY_TABLE_NAME',
];

/** A value for the refusal: quoted so that spaces and an empty value are seen; a password is never shown. */
function shown(name: SettingName, value: string): string {
  return name === 'MUSEUM_ADMIN_PASSWORD' ? `${name} (not shown)` : `${name}=${JSON.stringify(value)}`;
}

/**
 * One line per refused variable among `names` (all documented ones by default), plus one per
 * contradictory pair; an empty list when every value is acceptable.
 */
export function settingProblems(
  env: NodeJS.ProcessEnv = process.env,
  names: readonly SettingName[] = Object.keys(SETTINGS) as SettingName[],
): string[] {
  const problems: string[] = [];
  for (const name of names) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    const rule: Rule = SETTINGS[name];
    if (!v.safeParse(rule.schema, value).success)
      problems.push(`${shown(name, value)} is not accepted: use ${rule.accepted}, or leave it unset.`);
  }
  if (problems.length > 0) return problems;
  if (names.includes('MUSEUM_IN_MEMORY') && env.MUSEUM_IN_MEMORY === '1' && env.DYNAMODB_ENDPOINT) {
    problems.push(
      'MUSEUM_IN_MEMORY=1 and DYNAMODB_ENDPOINT cannot both be set: the first starts a DynamoDB Local of its own, the second uses one already running.',
    );
  }
  const port = Number(env.PORT || 3000);
  if (names.includes('PORT') && env.MUSEUM_DYNAMODB_PORT && Number(env.MUSEUM_DYNAMODB_PORT) === port && port !== 0) {
    problems.push(`MUSEUM_DYNAMODB_PORT=${env.MUSEUM_DYNAMODB_PORT} is the API's own PORT: use another port for DynamoDB Local.`);
  }
  return problems;
}
