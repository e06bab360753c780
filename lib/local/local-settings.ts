// Every environment variable the README's configuration table documents, checked once when a
// local command starts and before it creates anything (no data directory, no DynamoDB Local): a
// bad value is refused with one line that names the variable and what it accepts. The rules are
// valibot schemas over the raw strings; an empty value counts as unset, as a shell's `VAR=` reads.
import { accessSync, constants, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { isTimeZone } from '../../functions/events/calendar-dates.ts';
import { chosenCredentialProblem, MIN_CHOSEN_CREDENTIAL_LENGTH } from '../../functions/auth/credentials.ts';

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
  MUSEUM_SQS_PORT: { schema: integerFrom(0, 65_535), accepted: 'a port number from 0 to 65535 (0 or unset: any free port)' },
  MUSEUM_KMS_PORT: { schema: integerFrom(0, 65_535), accepted: 'a port number from 0 to 65535 (0 or unset: any free port)' },
  MUSEUM_SECRETS_MANAGER_PORT: { schema: integerFrom(0, 65_535), accepted: 'a port number from 0 to 65535 (0 or unset: any free port)' },
  MUSEUM_ADMIN_PASSWORD: {
    schema: v.pipe(
      v.string(),
      v.check((password) => chosenCredentialProblem(password) === undefined),
    ),
    accepted: `a password of at least ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters without control or invisible format characters`,
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
  const rate = env.MUSEUM_THROTTLE_RATE_LIMIT || undefined;
  const burst = env.MUSEUM_THROTTLE_BURST_LIMIT || undefined;
  if (names.includes('MUSEUM_THROTTLE_RATE_LIMIT') && (rate === undefined) !== (burst === undefined)) {
    const [given, missing] =
      rate === undefined
        ? ['MUSEUM_THROTTLE_BURST_LIMIT', 'MUSEUM_THROTTLE_RATE_LIMIT']
        : ['MUSEUM_THROTTLE_RATE_LIMIT', 'MUSEUM_THROTTLE_BURST_LIMIT'];
    problems.push(`${given} is set without ${missing}: set both (a rate and a burst for every method), or neither.`);
  }
  if (names.includes('MUSEUM_IN_MEMORY') && env.MUSEUM_IN_MEMORY === '1' && env.DYNAMODB_ENDPOINT) {
    problems.push(
      'MUSEUM_IN_MEMORY=1 and DYNAMODB_ENDPOINT cannot both be set: the first starts a DynamoDB Local of its own, the second uses one already running.',
    );
  }
  const port = Number(env.PORT || 3000);
  if (names.includes('PORT') && env.MUSEUM_DYNAMODB_PORT && Number(env.MUSEUM_DYNAMODB_PORT) === port && port !== 0) {
    problems.push(`MUSEUM_DYNAMODB_PORT=${env.MUSEUM_DYNAMODB_PORT} is the API's own PORT: use another port for DynamoDB Local.`);
  }
  if (names.includes('PORT')) problems.push(...sharedPorts(env, port));
  return problems;
}

/** The stand-ins' port settings, each a listener of its own. */
const STAND_IN_PORTS = ['MUSEUM_SQS_PORT', 'MUSEUM_KMS_PORT', 'MUSEUM_SECRETS_MANAGER_PORT'] as const;

/** One line per stand-in port setting that names a port another listener of the run was given (PORT, DynamoDB Local's, another stand-in's). */
function sharedPorts(env: NodeJS.ProcessEnv, apiPort: number): string[] {
  const taken = new Map<number, string>([[apiPort, 'PORT']]);
  if (env.MUSEUM_DYNAMODB_PORT) taken.set(Number(env.MUSEUM_DYNAMODB_PORT), 'MUSEUM_DYNAMODB_PORT');
  const problems: string[] = [];
  for (const name of STAND_IN_PORTS) {
    const port = Number(env[name] || 0);
    if (port === 0) continue;
    const other = taken.get(port);
    if (other) problems.push(`${name}=${port} is also ${other}: give each listener of the run its own port.`);
    else taken.set(port, name);
  }
  return problems;
}

/**
 * The MUSEUM_* variables that the project's other commands read (`npm run smoke`'s, documented in
 * the README's commands): set for them, not misspelt settings of the local run.
 */
const OTHER_COMMANDS_SETTINGS = ['MUSEUM_API_URL', 'MUSEUM_API_USERNAME', 'MUSEUM_API_PASSWORD'];

/**
 * One line per MUSEUM_* variable that is no setting of the local run (nor of another command):
 * a misspelt `MUSEUM_IN_MEMROY=1` would otherwise be ignored and the run use its data directory.
 * The line names the setting it most likely meant.
 */
export function unknownSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = Object.keys(SETTINGS);
  return Object.keys(env)
    .filter((name) => name.startsWith('MUSEUM_') && !known.includes(name) && !OTHER_COMMANDS_SETTINGS.includes(name))
    .sort()
    .map((name) => {
      const likely = known.find((setting) => editDistance(setting, name) <= 2);
      return `${name} is not a setting of the local API${likely ? `: did you mean ${likely}?` : ''} (the README's configuration lists them); unset it.`;
    });
}

/** Levenshtein distance: how many one-character edits turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Why `path` cannot be a directory this run uses (creating it if missing), or undefined: the
 * nearest part of it that exists must be a directory this user may write in.
 */
function unusableDirectory(path: string, mustExist: boolean): string | undefined {
  let current = resolve(path);
  let missing = false;
  let isDirectory: boolean;
  for (;;) {
    try {
      isDirectory = statSync(current).isDirectory();
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return `${current} cannot be read (${code ?? (error as Error).message})`;
      if (dirname(current) === current) return 'no part of it exists';
      missing = true;
      current = dirname(current);
    }
  }
  if (!isDirectory) return `${current} is not a directory`;
  if (missing && mustExist) return `${resolve(path)} does not exist`;
  if (mustExist) return undefined;
  try {
    accessSync(current, constants.W_OK | constants.X_OK);
  } catch {
    return `${current} is not writable`;
  }
  return undefined;
}

/**
 * One line per directory setting the local run cannot use: the data directory (when the run keeps
 * its data there) and the bundles' directory (made by the build, so it must exist without it).
 */
export function directoryProblems({ bundles, build }: { bundles: string; build: boolean }, env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [];
  const dataDirectory = env.MUSEUM_DATA_DIR || '.data';
  const dataProblem = env.MUSEUM_IN_MEMORY === '1' || env.DYNAMODB_ENDPOINT ? undefined : unusableDirectory(dataDirectory, false);
  if (dataProblem) problems.push(`MUSEUM_DATA_DIR=${JSON.stringify(dataDirectory)} cannot be used: ${dataProblem}.`);
  const bundlesProblem = unusableDirectory(bundles, !build);
  if (bundlesProblem)
    problems.push(
      `MUSEUM_BUNDLES_DIR=${JSON.stringify(bundles)} cannot be used: ${bundlesProblem}${build ? '' : ' (without --build nothing builds the bundles there)'}.`,
    );
  return problems;
}

/** How long DYNAMODB_ENDPOINT has to accept a connection before it counts as unreachable. */
const ENDPOINT_TIMEOUT_MS = 5_000;

/** Why DYNAMODB_ENDPOINT (already checked to be an http(s) URL) cannot be reached, or undefined when it accepts a connection. */
export async function endpointProblem(endpoint: string): Promise<string | undefined> {
  const url = new URL(endpoint);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const failure = await new Promise<string | undefined>((settle) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: ENDPOINT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      settle(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      settle(`no answer within ${ENDPOINT_TIMEOUT_MS / 1000} s`);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
  });
  return failure === undefined
    ? undefined
    : `DYNAMODB_ENDPOINT=${JSON.stringify(endpoint)} cannot be reached (${failure}): start DynamoDB there, or unset it and npm start runs DynamoDB Local.`;
}
