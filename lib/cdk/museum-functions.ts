// The handlers of the route table and the authorizer, one loop over the route table. Each function
// runs the bundle the local API runs (dist/functions/<name>/index.mjs), has its own role with only
// its own data access (lib/cdk/function-permissions.ts), its own log group (JSON lines) and active
// tracing. The authorizer has reserved concurrency sized to the methods' throttling
// (authorizerEnvironments() in functions/deployment.ts): a flood of new credentials beyond it is
// throttled (503 + Retry-After) instead of scaling the bill without bound.
//
// Every function is published as a version behind the alias `live`, and API Gateway (the
// integrations and the authorizer) and the webhook pipeline's event source mappings call only the
// alias: a release is a new version, and moving the alias is how it reaches traffic, gradually in
// production (lib/cdk/canary-releases.ts) and at once in previews. Old versions are retained so
// that a rollback is pointing the alias back (to a release recorded as good, bin/rollback.sh).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { routes } from '../../functions/routes.ts';
import { AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { authorizerEnvironments, FUNCTION_SETTINGS, LAMBDA_NODE_OPTIONS } from '../../functions/deployment.ts';
import { museumEnvironment } from '../../functions/events/museum-settings.ts';
import { dataAccessStatements, type WebhookResources as WebhookResourceArns } from './function-permissions.ts';
import type { MuseumTables } from './museum-tables.ts';
import type { StageConfig } from './stage-config.ts';
import type { WebhookResources } from './webhook-pipeline.ts';

/** Where scripts/build.ts writes the bundles; cdk.json's app command builds them first. */
export const FUNCTIONS_DIRECTORY = fileURLToPath(new URL('../../dist/functions', import.meta.url));

export const POWERTOOLS_SERVICE_NAME = 'museum-special-events';
export const METRICS_NAMESPACE = 'MuseumSpecialEvents';

export interface MuseumFunctionsProps {
  config: StageConfig;
  tables: MuseumTables;
  /** The credential keys the authorizer verifies with (lib/cdk/credential-keys-secret.ts). */
  credentialKeys: ISecret;
  /** The webhook queue and secrets key, which the webhook functions use. */
  webhooks: WebhookResources;
  functionsDirectory?: string;
}

export class MuseumFunctions extends Construct {
  /** Route handlers by bundle name (route.handler). */
  readonly handlers: ReadonlyMap<string, lambda.Function>;
  readonly authorizer: lambda.Function;
  /** The `live` alias of each route handler, by bundle name: what API Gateway integrates. */
  readonly liveHandlers: ReadonlyMap<string, lambda.Alias>;
  /** The authorizer's `live` alias: what the REST API's authorizer calls. */
  readonly liveAuthorizer: lambda.Alias;
  /** The webhook pipeline's functions, which event source mappings invoke (by bundle name). */
  readonly background: ReadonlyMap<string, lambda.Function>;
  /** The `live` alias of each webhook pipeline function: what its event source mapping invokes. */
  readonly liveBackground: ReadonlyMap<string, lambda.Alias>;

  constructor(scope: Construct, id: string, props: MuseumFunctionsProps) {
    super(scope, id);
    const { config, tables, credentialKeys } = props;
    const directory = props.functionsDirectory ?? FUNCTIONS_DIRECTORY;
    const common = {
      TABLE_NAME: tables.events.tableName,
      // The service name is the metrics' dimension: a preview's traffic never mixes with production's.
      POWERTOOLS_SERVICE_NAME: config.isProduction ? POWERTOOLS_SERVICE_NAME : `${POWERTOOLS_SERVICE_NAME}-${config.stage}`,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
    };
    const webhookEnvironment = {
      WEBHOOK_QUEUE_URL: props.webhooks.queue.queueUrl,
      WEBHOOK_SECRETS_KEY_ID: props.webhooks.key.keyArn,
      // Where the delivery function puts a change whose retry schedule is used up.
      WEBHOOK_DEAD_LETTER_QUEUE_URL: props.webhooks.deadLetters.queueUrl,
    };
    const webhookResources = { queueArn: props.webhooks.queue.queueArn, keyArn: props.webhooks.key.keyArn };
    const handlerEnvironment = {
      ...common,
      IDEMPOTENCY_TABLE_NAME: tables.idempotency.tableName,
      MUSEUM_TIME_ZONE: config.timeZone,
      CORS_ALLOWED_ORIGINS: config.corsOrigins.join(','),
      ...museumEnvironment(config.museum),
    };

    const handlers = new Map<string, lambda.Function>();
    for (const route of routes) {
      const handlerName = route.handler;
      // Only the webhook operations need the queue and the key; only those granted the credential keys (calendar feeds) their secret.
      const environment = {
        ...handlerEnvironment,
        ...(handlerName.includes('webhook') ? webhookEnvironment : {}),
        ...(route.grants.credentialKeys ? { CREDENTIAL_KEYS_SECRET: credentialKeys.secretArn } : {}),
      };
      handlers.set(
        handlerName,
        this.bundledFunction(handlerName, {
          directory,
          config,
          tables,
          credentialKeys,
          environment,
          settings: FUNCTION_SETTINGS.handler,
          webhooks: webhookResources,
        }),
      );
    }
    this.background = new Map(
      (
        [
          [WEBHOOK_FUNCTIONS.consumer.handler, FUNCTION_SETTINGS.webhookConsumer],
          [WEBHOOK_FUNCTIONS.delivery.handler, FUNCTION_SETTINGS.webhookDelivery],
        ] as const
      ).map(([name, settings]) => [
        name,
        this.bundledFunction(name, {
          directory,
          config,
          tables,
          credentialKeys,
          environment: { ...common, ...webhookEnvironment },
          settings,
          webhooks: webhookResources,
        }),
      ]),
    );
    this.handlers = handlers;
    this.authorizer = this.bundledFunction(AUTHORIZER_HANDLER, {
      directory,
      config,
      tables,
      credentialKeys,
      environment: { ...common, CREDENTIAL_KEYS_SECRET: credentialKeys.secretArn },
      // What a flood at this stage's method limits needs (a preview's are lower), at most
      // FUNCTION_SETTINGS' production reservation (stage-config.ts refuses more).
      settings: { ...FUNCTION_SETTINGS.authorizer, reservedConcurrency: authorizerEnvironments(config.throttle) },
    });
    this.liveHandlers = new Map([...handlers].map(([name, fn]) => [name, liveAlias(fn, 'What API Gateway calls')]));
    this.liveAuthorizer = liveAlias(this.authorizer, 'What API Gateway calls');
    this.liveBackground = new Map([...this.background].map(([name, fn]) => [name, liveAlias(fn, 'What its event source mapping calls')]));
  }

  /** Each function with its `live` alias. */
  get allLive(): { fn: lambda.Function; alias: lambda.Alias }[] {
    const withAlias = (functions: ReadonlyMap<string, lambda.Function>, aliases: ReadonlyMap<string, lambda.Alias>) =>
      [...functions].map(([name, fn]) => ({ fn, alias: aliases.get(name) as lambda.Alias }));
    return [
      ...withAlias(this.handlers, this.liveHandlers),
      { fn: this.authorizer, alias: this.liveAuthorizer },
      ...withAlias(this.background, this.liveBackground),
    ];
  }

  get all(): lambda.Function[] {
    return [...this.handlers.values(), this.authorizer, ...this.background.values()];
  }

  private bundledFunction(
    name: string,
    options: {
      directory: string;
      config: StageConfig;
      tables: MuseumTables;
      credentialKeys: ISecret;
      environment: Record<string, string>;
      settings: { memorySize: number; timeoutSeconds: number; reservedConcurrency?: number };
      webhooks?: WebhookResourceArns;
    },
  ): lambda.Function {
    const bundle = join(options.directory, name);
    if (!existsSync(join(bundle, 'index.mjs'))) {
      throw new Error(`${bundle}/index.mjs is missing: run \`npm run build\` first (cdk.json's app command does)`);
    }
    const id = pascalCase(name);
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
      retention: options.config.logRetentionDays as logs.RetentionDays,
      removalPolicy: options.config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // An own role instead of the AWSLambdaBasicExecutionRole managed policy: it may write only
    // to its own log group.
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${name} function`,
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );
    for (const statement of dataAccessStatements(
      name,
      { ...options.tables.grants, credentialKeys: options.credentialKeys },
      options.webhooks,
    ))
      role.addToPrincipalPolicy(statement);

    const fn = new lambda.Function(this, id, {
      // The release (`-c release=<commit>`, set by CI) in the description: every release
      // publishes one new version of every function, and bin/rollback.sh reads which release a
      // live version belongs to from here.
      description: `Museum Special Events API: ${name}${options.config.release ? ` (release ${options.config.release})` : ''}`,
      code: lambda.Code.fromAsset(bundle),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: options.settings.memorySize,
      timeout: Duration.seconds(options.settings.timeoutSeconds),
      environment: options.environment,
      logGroup,
      // In production a new version per release keeps the older ones, the targets of a rollback
      // by hand (docs/DEPLOY.md); deleting the function deletes them all. Nothing of a preview is retained.
      currentVersionOptions: { removalPolicy: options.config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY },
      // Powertools writes JSON; JSON format makes Lambda's own lines (START, REPORT, errors) JSON too.
      loggingFormat: lambda.LoggingFormat.JSON,
      role,
      tracing: lambda.Tracing.ACTIVE,
      ...(options.settings.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: options.settings.reservedConcurrency }),
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
    return fn;
  }
}

export const LIVE_ALIAS = 'live';

function liveAlias(fn: lambda.Function, description: string): lambda.Alias {
  // currentVersion publishes a new version whenever the code or configuration changes.
  return new lambda.Alias(fn, 'Live', { aliasName: LIVE_ALIAS, version: fn.currentVersion, description });
}

function pascalCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, __: string, letter: string) => letter.toUpperCase());
}
