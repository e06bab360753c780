// The local run's settings: every variable of the README's configuration table has a rule, and a
// bad value is one line naming the variable and what it accepts.
import { readFileSync } from 'node:fs';
import { directoryProblems, SETTINGS, settingProblems, unknownSettings, type SettingName } from '../../lib/local/local-settings.ts';

test('every variable of the README configuration table has a rule, and every rule a row', () => {
  const readme = readFileSync('README.md', 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const documented = [...table.matchAll(/^\| ((?:`[A-Z_]+`(?:, )?)+) \|/gm)].flatMap((row) =>
    [...(row[1] ?? '').matchAll(/`([A-Z_]+)`/g)].map((name) => name[1] ?? ''),
  );
  expect(documented.length).toBeGreaterThan(10);
  // MUSEUM_DYNAMODB_PORT is new: its row is in the docs pass's hands until then.
  expect(documented.filter((name) => !(name in SETTINGS))).toEqual([]);
  expect(Object.keys(SETTINGS).filter((name) => !documented.includes(name) && name !== 'MUSEUM_DYNAMODB_PORT')).toEqual([]);
});

test.each([
  [
    'CORS_ALLOWED_ORIGINS',
    '*',
    /^CORS_ALLOWED_ORIGINS="\*" is not accepted: use comma-separated browser origins like https:\/\/museum\.example.*never \* or null/,
  ],
  ['CORS_ALLOWED_ORIGINS', 'https://museum.example,null', /^CORS_ALLOWED_ORIGINS=/],
  ['CORS_ALLOWED_ORIGINS', 'https://museum.example/path', /^CORS_ALLOWED_ORIGINS=/],
  ['MUSEUM_IN_MEMORY', 'yes', /^MUSEUM_IN_MEMORY="yes" is not accepted: use 1 or 0, or leave it unset\.$/],
  ['MUSEUM_LOG_FORMAT', 'xml', /^MUSEUM_LOG_FORMAT="xml" is not accepted: use text or json, or leave it unset\.$/],
  ['PORT', '70000', /^PORT="70000" is not accepted: use a port number from 0 to 65535/],
  ['PORT', '3000abc', /^PORT=/],
  ['MUSEUM_DYNAMODB_PORT', '-1', /^MUSEUM_DYNAMODB_PORT=/],
  ['MUSEUM_SQS_PORT', '65536', /^MUSEUM_SQS_PORT="65536" is not accepted: use a port number from 0 to 65535/],
  ['MUSEUM_KMS_PORT', 'any', /^MUSEUM_KMS_PORT=/],
  ['MUSEUM_SECRETS_MANAGER_PORT', '-1', /^MUSEUM_SECRETS_MANAGER_PORT=/],
  ['MUSEUM_IN_MEMORY_MAX_MB', '0', /^MUSEUM_IN_MEMORY_MAX_MB="0" is not accepted: use a positive number of megabytes/],
  [
    'AUTHORIZER_CACHE_TTL_SECONDS',
    '3601',
    /^AUTHORIZER_CACHE_TTL_SECONDS="3601" is not accepted: use a whole number of seconds from 0 to 3600, as on API Gateway/,
  ],
  ['MUSEUM_TIME_ZONE', 'Mars/Olympus', /^MUSEUM_TIME_ZONE="Mars\/Olympus" is not accepted: use an IANA time zone/],
  ['DYNAMODB_ENDPOINT', 'localhost:8000', /^DYNAMODB_ENDPOINT="localhost:8000" is not accepted: use the URL of a DynamoDB endpoint/],
  ['MUSEUM_DYNAMODB_KEY_ID', 'not-a-key', /^MUSEUM_DYNAMODB_KEY_ID=/],
  ['POWERTOOLS_LOG_LEVEL', 'LOUD', /^POWERTOOLS_LOG_LEVEL="LOUD" is not accepted: use TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL or SILENT/],
  ['POWERTOOLS_METRICS_DISABLED', 'yes', /^POWERTOOLS_METRICS_DISABLED="yes" is not accepted: use true or false/],
  ['TABLE_NAME', 'a b', /^TABLE_NAME=/],
  ['IDEMPOTENCY_TABLE_NAME', 'x', /^IDEMPOTENCY_TABLE_NAME=/],
] as const)('%s=%j is refused in one line that names it and what it accepts', (name, value, expected) => {
  const problems = settingProblems({ [name]: value });
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(expected);
  expect(problems[0]).not.toContain('\n');
});

test('an admin password under 20 characters is refused in one sentence without showing it; 20 are accepted', () => {
  for (const password of ['short-one', 'x'.repeat(19), '🦕'.repeat(19)]) {
    expect(settingProblems({ MUSEUM_ADMIN_PASSWORD: password })).toEqual([
      'MUSEUM_ADMIN_PASSWORD (not shown) is not accepted: use a password of at least 20 characters without control or invisible format characters, or leave it unset.',
    ]);
  }
  expect(settingProblems({ MUSEUM_ADMIN_PASSWORD: 'x'.repeat(20) })).toEqual([]);
  expect(settingProblems({ MUSEUM_ADMIN_PASSWORD: '🦕'.repeat(20) })).toEqual([]);
});

test('good values, and empty ones (unset), are accepted', () => {
  const good: Partial<Record<SettingName, string>> = {
    PORT: '0',
    MUSEUM_DYNAMODB_PORT: '8000',
    MUSEUM_ADMIN_PASSWORD: 'a-good-password-of-twenty',
    MUSEUM_IN_MEMORY: '1',
    MUSEUM_IN_MEMORY_MAX_MB: '0.5',
    MUSEUM_BUNDLES_DIR: 'dist/functions',
    MUSEUM_DATA_DIR: '/tmp/data dir',
    MUSEUM_LOG_FORMAT: 'json',
    MUSEUM_DYNAMODB_KEY_ID: 'ABC123',
    AUTHORIZER_CACHE_TTL_SECONDS: '3600',
    MUSEUM_TIME_ZONE: 'Europe/Paris',
    CORS_ALLOWED_ORIGINS: 'https://museum.example, http://localhost:5173',
    POWERTOOLS_LOG_LEVEL: 'warn',
    POWERTOOLS_METRICS_DISABLED: 'false',
    TABLE_NAME: 'museum-events',
    IDEMPOTENCY_TABLE_NAME: 'museum.idempotency_1',
  };
  expect(settingProblems(good)).toEqual([]);
  expect(settingProblems(Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, ''])))).toEqual([]);
});

test('contradictory settings are refused in one line each', () => {
  expect(settingProblems({ MUSEUM_IN_MEMORY: '1', DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' })).toEqual([
    expect.stringMatching(/^MUSEUM_IN_MEMORY=1 and DYNAMODB_ENDPOINT cannot both be set/),
  ]);
  expect(settingProblems({ PORT: '8000', MUSEUM_DYNAMODB_PORT: '8000' })).toEqual([
    expect.stringMatching(/^MUSEUM_DYNAMODB_PORT=8000 is the API's own PORT/),
  ]);
  // Each stand-in is a listener of its own (lib/local/aws-json-endpoint.ts): no port twice.
  expect(settingProblems({ MUSEUM_SQS_PORT: '3000' })).toEqual([expect.stringMatching(/^MUSEUM_SQS_PORT=3000 is also PORT/)]);
  expect(
    settingProblems({
      MUSEUM_DYNAMODB_PORT: '8000',
      MUSEUM_SQS_PORT: '9324',
      MUSEUM_KMS_PORT: '9324',
      MUSEUM_SECRETS_MANAGER_PORT: '8000',
    }),
  ).toEqual([
    expect.stringMatching(/^MUSEUM_KMS_PORT=9324 is also MUSEUM_SQS_PORT/),
    expect.stringMatching(/^MUSEUM_SECRETS_MANAGER_PORT=8000 is also MUSEUM_DYNAMODB_PORT/),
  ]);
  expect(settingProblems({ PORT: '0', MUSEUM_SQS_PORT: '0', MUSEUM_KMS_PORT: '0' })).toEqual([]);
});

test('only the named settings are checked (the CLIs check what their store reads)', () => {
  expect(settingProblems({ MUSEUM_LOG_FORMAT: 'xml', MUSEUM_IN_MEMORY: 'yes' }, ['MUSEUM_IN_MEMORY'])).toEqual([
    expect.stringMatching(/^MUSEUM_IN_MEMORY=/),
  ]);
});

test('a throttle limit without the other is incomplete: one line naming both', () => {
  expect(settingProblems({ MUSEUM_THROTTLE_RATE_LIMIT: '10' })).toEqual([
    'MUSEUM_THROTTLE_RATE_LIMIT is set without MUSEUM_THROTTLE_BURST_LIMIT: set both (a rate and a burst for every method), or neither.',
  ]);
  expect(settingProblems({ MUSEUM_THROTTLE_BURST_LIMIT: '10', MUSEUM_THROTTLE_RATE_LIMIT: '' })).toEqual([
    expect.stringMatching(/^MUSEUM_THROTTLE_BURST_LIMIT is set without MUSEUM_THROTTLE_RATE_LIMIT/),
  ]);
  expect(settingProblems({ MUSEUM_THROTTLE_BURST_LIMIT: '10', MUSEUM_THROTTLE_RATE_LIMIT: '5' })).toEqual([]);
});

test('a MUSEUM_* variable that is no setting is refused, naming the one it most likely meant', () => {
  expect(
    unknownSettings({ MUSEUM_IN_MEMROY: '1', MUSEUM_COLOUR: 'red', MUSEUM_DATA_DIR: 'x', MUSEUM_API_URL: 'https://x', HOME: '/' }),
  ).toEqual([
    "MUSEUM_COLOUR is not a setting of the local API (the README's configuration lists them); unset it.",
    "MUSEUM_IN_MEMROY is not a setting of the local API: did you mean MUSEUM_IN_MEMORY? (the README's configuration lists them); unset it.",
  ]);
});

test('a directory setting must name a directory this user can make or write', () => {
  expect(directoryProblems({ bundles: '/dev/null/x', build: true }, { MUSEUM_DATA_DIR: '/dev/null/y' })).toEqual([
    'MUSEUM_DATA_DIR="/dev/null/y" cannot be used: /dev/null is not a directory.',
    'MUSEUM_BUNDLES_DIR="/dev/null/x" cannot be used: /dev/null is not a directory.',
  ]);
  // In memory or on DYNAMODB_ENDPOINT the data directory is not used; without --build the bundles must be there.
  expect(
    directoryProblems({ bundles: 'no-such-bundles', build: false }, { MUSEUM_DATA_DIR: '/dev/null/y', MUSEUM_IN_MEMORY: '1' }),
  ).toEqual([
    expect.stringMatching(/^MUSEUM_BUNDLES_DIR="no-such-bundles" cannot be used: .*no-such-bundles does not exist \(without --build/),
  ]);
  expect(directoryProblems({ bundles: 'test', build: false }, { MUSEUM_DATA_DIR: 'new/data' })).toEqual([]);
});
