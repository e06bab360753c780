// Every configuration of the CDK app the infrastructure tests read (test/infra/, and the system
// tier's test/infra-engines/), each synthesized once per test run and shared by every file:
// test/infra/synthesize-configurations.ts synthesizes them in Node itself, outside jest, and
// test/infra/synthesize.ts hands a test the stored result of the one it asks for. A context a
// test passes to synthesize() that is not listed here fails, naming this file, and so does a test
// file a configuration does not list as reading it: add it below. The fast tier's global setup
// synthesizes the configurations its chosen files read; without it (the system tier) a file's
// first synthesize() synthesizes those the file reads. A configuration the app refuses stays listed
// too: its stored result is the error, which synthesize() throws.
//
// Plain data, read both by the test files (in jest) and by the synthesizing process (in Node).

/** A region that is not the CDK CLI's fallback, so a leaked us-east-1 shows. */
export const TEST_REGION = 'eu-west-1';

/**
 * Set in the synthesizing process's environment for every configuration: the local run's own
 * settings, as an operator's shell after `npm start` might have them. None may reach a template
 * (test/infra/local-only-settings.test.ts).
 */
export const SYNTHESIS_ENVIRONMENT: Readonly<Record<string, string>> = {
  WEBHOOK_ALLOW_LOOPBACK: '1',
  WEBHOOK_RETRY_SCALE: '0.001',
  MUSEUM_WEBHOOK_RETRY_SCALE: '0.001',
};

/**
 * The app with constructs of a test's own added to its API stack (test/infra/nag-rule-probes.ts):
 * cdk-nag's findings on them are what the test reads.
 */
export type ProbeName = 'unprotected-global-tables' | 'retained-fixed-names';

export interface Configuration {
  /** `-c` context beside cdk.json's; the region is TEST_REGION unless given. */
  context: Readonly<Record<string, string>>;
  probe?: ProbeName;
  /** The test files that read it, relative to test/: synthesize() refuses any other file. */
  readBy: readonly string[];
}

const API_STACK = 'infra/api-stack.test.ts';
const LOCAL_ONLY_SETTINGS = 'infra/local-only-settings.test.ts';
const PREVIEW_CONTAINMENT = 'infra/preview-containment.test.ts';
const RESTORE = 'infra/restore.test.ts';
const SECRETS_KEY_GRANTS = 'infra/secrets-key-grants.test.ts';
const THROTTLING = 'infra/throttling.test.ts';
const CFN_LINT = 'infra-engines/cfn-lint.test.ts';

const ALARMS = { alarmEmail: 'ops@museum.example' };
const CI = { githubRepository: 'museum/special-events-api', productionAccount: '111111111111', previewAccount: '222222222222' };
const CUSTOM_DOMAIN = { domainName: 'api.museum.example', certificateArn: `arn:aws:acm:${TEST_REGION}:123456789012:certificate/abc` };
const streamOf = (table: string) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${table}/stream/2026-11-24T10:00:00.000`;
const RESTORED = {
  events: 'MuseumApi-prod-TablesEvents-restored-20261124',
  idempotency: 'MuseumApi-prod-TablesIdempotency-restored-20261124',
};
const RESTORED_AGAIN = {
  events: 'MuseumApi-prod-TablesEvents-restored-20261201',
  idempotency: 'MuseumApi-prod-TablesIdempotency-restored-20261201',
};
const attach = (tables: { events: string; idempotency: string }) => ({
  eventsTableName: tables.events,
  eventsTableStreamArn: streamOf(tables.events),
  idempotencyTableName: tables.idempotency,
});

/** By name (the name is only for people and for the directory it is synthesized into). */
export const CONFIGURATIONS: Readonly<Record<string, Configuration>> = {
  production: { context: {}, readBy: [API_STACK, 'infra/authorizer-identity.test.ts'] },
  'preview pr-1': { context: { stage: 'pr-1' }, readBy: [API_STACK] },
  'configured preview pr-2': {
    context: {
      stage: 'pr-2',
      authorizerCacheTtlSeconds: '60',
      corsOrigins: 'https://museum.example',
      waf: 'true',
      monitoring: 'true',
      ...ALARMS,
      ...CUSTOM_DOMAIN,
    },
    readBy: [API_STACK],
  },
  'production without WAF, alarms by e-mail': { context: { waf: 'false', ...ALARMS }, readBy: [API_STACK] },
  'production, alarms to an existing topic': {
    context: { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:museum-ops-chat' },
    readBy: [API_STACK],
  },
  'unprotected global tables': { context: ALARMS, probe: 'unprotected-global-tables', readBy: [API_STACK] },
  'retained resources with fixed names': { context: ALARMS, probe: 'retained-fixed-names', readBy: [API_STACK] },
  'production, authorizer cache 60 s': { context: { authorizerCacheTtlSeconds: '60' }, readBy: ['infra/authorizer-identity.test.ts'] },
  'production with the CI identities': { context: CI, readBy: ['infra/ci-identities.test.ts'] },
  'production, alarms by e-mail': {
    context: ALARMS,
    readBy: [
      'infra/docs-names.test.ts',
      LOCAL_ONLY_SETTINGS,
      PREVIEW_CONTAINMENT,
      RESTORE,
      'infra/rollback.test.ts',
      SECRETS_KEY_GRANTS,
      CFN_LINT,
    ],
  },
  'preview pr-3': { context: { stage: 'pr-3' }, readBy: [LOCAL_ONLY_SETTINGS] },
  'production with restored tables attached': {
    context: { ...ALARMS, ...attach(RESTORED) },
    readBy: [LOCAL_ONLY_SETTINGS, RESTORE, CFN_LINT],
  },
  'preview pr-7 with the CI identities': { context: { stage: 'pr-7', ...CI }, readBy: [PREVIEW_CONTAINMENT, CFN_LINT] },
  'production with a custom domain': { context: { ...ALARMS, ...CUSTOM_DOMAIN }, readBy: [PREVIEW_CONTAINMENT, CFN_LINT] },
  'production with a restored events table attached': {
    context: { ...ALARMS, eventsTableName: RESTORED.events, eventsTableStreamArn: streamOf(RESTORED.events) },
    readBy: [PREVIEW_CONTAINMENT],
  },
  'production and the CI identities in ap-southeast-2': {
    context: { region: 'ap-southeast-2', ...ALARMS, ...CI },
    readBy: ['infra/region.test.ts'],
  },
  'production with tables restored again attached': { context: { ...ALARMS, ...attach(RESTORED_AGAIN) }, readBy: [RESTORE] },
  'production managing the attached tables': {
    context: { ...ALARMS, ...attach(RESTORED), manageAttachedTables: 'true' },
    readBy: [RESTORE, CFN_LINT],
  },
  'refused: an attached table without the prefix': {
    context: {
      ...ALARMS,
      eventsTableName: 'museum-events-restored-20261124',
      eventsTableStreamArn: streamOf('museum-events-restored-20261124'),
    },
    readBy: [RESTORE],
  },
  'refused: an attached idempotency table with the events prefix': {
    context: { ...ALARMS, idempotencyTableName: 'MuseumApi-prod-TablesEvents-x' },
    readBy: [RESTORE],
  },
  'refused: an attached events table without its stream': { context: { ...ALARMS, eventsTableName: RESTORED.events }, readBy: [RESTORE] },
  "refused: an attached events table with another table's stream": {
    context: { ...ALARMS, eventsTableName: RESTORED.events, eventsTableStreamArn: streamOf(RESTORED_AGAIN.events) },
    readBy: [RESTORE],
  },
  'refused: managing attached tables without naming them': { context: { ...ALARMS, manageAttachedTables: 'true' }, readBy: [RESTORE] },
  'preview pr-5': { context: { stage: 'pr-5' }, readBy: [SECRETS_KEY_GRANTS] },
  'production, stage named': { context: { stage: 'prod' }, readBy: [THROTTLING] },
  'preview pr-7': { context: { stage: 'pr-7' }, readBy: [THROTTLING] },
  'production, stage named, one CORS origin': { context: { stage: 'prod', corsOrigins: 'https://museum.example' }, readBy: [THROTTLING] },
  'production, stage named, alarms by e-mail': { context: { stage: 'prod', ...ALARMS }, readBy: [THROTTLING] },
  'refused: a rate the authorizer cannot keep up with': { context: { stage: 'pr-8', throttleRateLimit: '5000' }, readBy: [THROTTLING] },
  'refused: a burst the authorizer cannot keep up with': {
    context: { stage: 'pr-8', throttleRateLimit: '500', throttleBurstLimit: '5000' },
    readBy: [THROTTLING],
  },
  'production, two CORS origins': {
    context: { corsOrigins: 'https://museum.example,https://shop.museum.example' },
    readBy: ['infra-engines/mapping-templates.test.ts'],
  },
};

/** The configurations these test files read (paths relative to test/), in the list's order. */
export function configurationsReadBy(files: readonly string[]): string[] {
  return Object.entries(CONFIGURATIONS)
    .filter(([, configuration]) => configuration.readBy.some((file) => files.includes(file)))
    .map(([name]) => name);
}

/** The context as the app gets it (beside cdk.json's): the region defaults to TEST_REGION. */
export function fullContext(context: Readonly<Record<string, string>>): Record<string, string> {
  return { region: TEST_REGION, ...context };
}

/** One string per configuration: its full context, keys sorted, and its probe. */
export function configurationKey(configuration: Pick<Configuration, 'context' | 'probe'>): string {
  const context = Object.entries(fullContext(configuration.context)).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify({ context, probe: configuration.probe ?? null });
}

/** What the synthesizing process stores for a configuration, as JSON, and synthesize() reads. */
export interface StoredSynthesis {
  name: string;
  key: string;
  /** The variables of SYNTHESIS_ENVIRONMENT the synthesizing process had set. */
  environment: Record<string, string | undefined>;
  /** The cloud assembly directory (absent when the app threw before synthesizing). */
  outdir?: string;
  /** The error's message, when the app refused the configuration or synthesis failed (cdk-nag). */
  error?: string;
  /** What the app read from its context and which stacks and constructs it made (absent when it refused the configuration). */
  app?: AppDescription;
}

/** The app as built (lib/cdk/museum-app.ts's MuseumApp), reduced to what the tests look up in the templates. */
export interface AppDescription {
  /** lib/cdk/stage-config.ts's StageConfig, as JSON. */
  config: Record<string, any>;
  stacks: { api: string; mock: string; account: string | undefined; ci: string[] };
  /** The logical ids of the API stack's named constructs. */
  ids: ConstructIds;
}

export interface FunctionIds {
  function: string;
  role: string;
  /** The role's DefaultPolicy (AWS::IAM::Policy). */
  defaultPolicy: string;
}

export interface ConstructIds {
  /** By function name (routes' handlers, the authorizer, the webhook functions). */
  functions: Record<string, FunctionIds>;
  /** Every function behind its `live` alias. */
  live: { function: string; alias: string }[];
  liveAuthorizer: string;
  /** Absent for a table the stage attaches instead of creating. */
  tables: { events?: string; idempotency?: string };
  authorizer: string;
  accessLogs: string;
  firewall?: { webAcl: string; logGroup: string; blockedIpv4: string; blockedIpv6: string };
  monitoringTopic?: string;
  releaseAlarms?: string[];
}
