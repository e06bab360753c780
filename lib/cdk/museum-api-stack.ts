// `MuseumApi-<stage>`: the tables, the functions, the REST API and, in production, its web ACL
// and alarms. Production stacks have termination protection.
import { CfnOutput, Fn, Stack, Token, Validations, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { API_VERSION } from '../../functions/routes.ts';
import { WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { eventsTable } from '../../functions/store/table-definition.ts';
import { apiDocuments } from './api-documents.ts';
import { ApiMonitoring } from './api-monitoring.ts';
import { acknowledgeNoFirewall, ApiFirewall } from './api-firewall.ts';
import { CanaryReleases } from './canary-releases.ts';
import { CredentialKeysSecret } from './credential-keys-secret.ts';
import { MuseumFunctions } from './museum-functions.ts';
import { MuseumTables } from './museum-tables.ts';
import { SpecialEventsApi } from './special-events-api.ts';
import { WebhookPipeline, WebhookResources } from './webhook-pipeline.ts';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { StageConfig } from './stage-config.ts';

export interface MuseumApiStackProps extends StackProps {
  config: StageConfig;
  /** Where the function bundles are; default dist/functions. */
  functionsDirectory?: string;
}

export class MuseumApiStack extends Stack {
  readonly tables: MuseumTables;
  /** The credential keys' secret (users CLI `--secret`, the authorizer). */
  readonly credentialKeys: CredentialKeysSecret;
  readonly functions: MuseumFunctions;
  readonly api: SpecialEventsApi;
  readonly monitoring: ApiMonitoring | undefined;
  readonly firewall: ApiFirewall | undefined;
  /** Production only: CodeDeploy canaries with automatic rollback; previews switch at once. */
  readonly releases: CanaryReleases | undefined;

  constructor(scope: Construct, id: string, props: MuseumApiStackProps) {
    super(scope, id, {
      description: `Museum Special Events API ${API_VERSION}: Lambda handlers, REST API and DynamoDB (${props.config.stage})`,
      terminationProtection: props.config.isProduction,
      // The handlers with their aliases, alarms and canaries pass CloudFormation's 1 MB template
      // body limit when indented; unindented they fit
      // (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html;
      // test/infra/api-stack.test.ts, "CloudFormation quotas", checks every template against them).
      suppressTemplateIndentation: true,
      ...props,
    });
    const { config } = props;
    this.tables = new MuseumTables(this, 'Tables', config);
    this.credentialKeys = new CredentialKeysSecret(this, 'CredentialKeys', config);
    const webhooks = new WebhookResources(this, 'Webhooks', config);
    this.functions = new MuseumFunctions(this, 'Functions', {
      config,
      tables: this.tables,
      credentialKeys: this.credentialKeys.secret,
      webhooks,
      ...(props.functionsDirectory ? { functionsDirectory: props.functionsDirectory } : {}),
    });
    this.acknowledgeTableGrants();
    this.api = new SpecialEventsApi(this, 'SpecialEvents', { config, functions: this.functions, documents: apiDocuments() });

    this.firewall = config.waf ? new ApiFirewall(this, 'Firewall', { config, stage: this.api.api.deploymentStage }) : undefined;
    if (!this.firewall) acknowledgeNoFirewall(this.api.api.deploymentStage, config);

    this.releases = config.isProduction
      ? new CanaryReleases(this, 'Releases', { config, functions: this.functions, api: this.api })
      : undefined;

    this.monitoring = config.monitoring
      ? new ApiMonitoring(this, 'Monitoring', { config, api: this.api, functions: this.functions, tables: this.tables })
      : undefined;
    this.addWebhookPipeline(config, webhooks);
    this.addOutputs();
  }

  /** The webhook deliveries, their alarms on the alarm topic (when monitored), and the dead-letter queue's output. */
  private addWebhookPipeline(config: StageConfig, webhooks: WebhookResources): void {
    const pipeline = new WebhookPipeline(this, 'WebhookPipeline', {
      config,
      resources: webhooks,
      table: this.tables.events,
      streams: this.tables.eventsStreams,
      consumer: this.functions.liveBackground.get(WEBHOOK_FUNCTIONS.consumer.handler) as lambda.Alias,
      delivery: this.functions.liveBackground.get(WEBHOOK_FUNCTIONS.delivery.handler) as lambda.Alias,
    });
    const topic = this.monitoring?.topic;
    if (topic) for (const alarm of pipeline.alarms) alarm.addAlarmAction(new SnsAction(topic));
    new CfnOutput(this, 'WebhookDeadLetterQueueArn', {
      description: 'Dead-letter queue of webhook deliveries (redrive: docs/DEPLOY.md, "Webhooks")',
      value: webhooks.deadLetters.queueArn,
    });
  }

  /** What operators and CI read from the stack: addresses, table and secret names, the release, the firewall's IP sets. */
  private addOutputs(): void {
    new CfnOutput(this, 'ApiBaseUrl', { description: 'Base URL of the Special Events API (ends in /v1.1)', value: this.api.baseUrl });
    new CfnOutput(this, 'TableName', {
      description: 'Events and users table (for `npm run users -- ... --table`)',
      value: this.tables.events.tableName,
    });
    new CfnOutput(this, 'CredentialKeysSecretArn', {
      description: 'The credential keys (for `npm run users -- ... --table <TableName> --secret <this>`)',
      value: this.credentialKeys.secret.secretArn,
    });
    new CfnOutput(this, 'ReleaseVersions', {
      description:
        'The function versions this deploy publishes, which the `live` aliases serve once it completes (recorded by CI as a good release, bin/rollback.sh)',
      value: Fn.join(
        ' ',
        this.functions.allLive.map(({ alias }) => alias.version.functionArn),
      ),
    });
    new CfnOutput(this, 'IdempotencyTableName', {
      description: 'Idempotency records of POST /special-events (docs/DEPLOY.md, Restore)',
      value: this.tables.idempotency.tableName,
    });
    if (this.api.domainName) {
      new CfnOutput(this, 'CustomDomainTarget', {
        description: 'Point a CNAME or alias record for the custom domain here',
        value: this.api.domainName.domainNameAliasDomainName,
      });
    }
    if (this.firewall) this.addBlockedAddressOutputs(this.firewall);
    if (this.monitoring)
      new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic the alarms notify', value: this.monitoring.topic.topicArn });
  }

  // What `aws wafv2 get-ip-set`/`update-ip-set` need (docs/DEPLOY.md, blocking an address).
  private addBlockedAddressOutputs(firewall: ApiFirewall): void {
    for (const [version, set] of [
      ['Ipv4', firewall.blockedAddresses.ipv4],
      ['Ipv6', firewall.blockedAddresses.ipv6],
    ] as const) {
      new CfnOutput(this, `Blocked${version}SetName`, {
        description: `WAF IP set of blocked ${version} addresses: name`,
        value: Fn.select(0, Fn.split('|', set.ref)),
      });
      new CfnOutput(this, `Blocked${version}SetId`, { description: `WAF IP set of blocked ${version} addresses: id`, value: set.attrId });
    }
  }

  /** cdk-nag's IAM5 flags the name-prefix grants (lib/cdk/museum-tables.ts); they are the point. */
  private acknowledgeTableGrants(): void {
    const literal = (value: string, token: string) => (Token.isUnresolved(value) ? token : value);
    const table = (name: string) =>
      `arn:${literal(this.partition, '<AWS::Partition>')}:dynamodb:${literal(this.region, '<AWS::Region>')}:${literal(this.account, '<AWS::AccountId>')}:table/${name}`;
    const { events, idempotency } = this.tables.namePrefixes;
    const resources = [
      `${events}*`,
      `${idempotency}*`,
      ...eventsTable.globalSecondaryIndexes.map((index) => `${events}*/index/${index.indexName}`),
      `${events}*/stream/*`,
    ];
    Validations.of(this.functions).acknowledge(
      ...resources.map((name) => ({
        id: `AwsSolutions-IAM5[Resource::${table(name)}]`,
        reason:
          'The tables of this stage of one kind (its own, or an attached restore), by name prefix: a switch between them never changes a role (lib/cdk/museum-tables.ts).',
      })),
    );
  }
}
