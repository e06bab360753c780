// The two DynamoDB tables, declared from the same definitions the local bootstrap uses, so the
// deployed key schema and index cannot drift from DynamoDB Local's.
//
// The functions' roles are granted every table of its kind the stage may serve from, by name
// prefix: the stack's own (CloudFormation names it `<stack>-<logical id>-<random>`,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-name.html) and any
// attached one, which must carry the same prefix; the webhook consumer is granted their streams
// the same way. So attaching a restored table changes the functions' TABLE_NAME and the stream
// the consumer's mapping reads, never a role: while CodeDeploy shifts traffic, the old version
// keeps reading its table and the new version reads the attached one, and the old stream's
// mapping keeps reading the old stream (docs/DEPLOY.md, "Restore").
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { eventsTable, idempotencyTable, type TableDefinition } from '../../functions/store/table-definition.ts';
import { MUSEUM_NAG_RULES } from './museum-nag-rules.ts';
import type { StageConfig } from './stage-config.ts';

export class MuseumTables extends Construct {
  /** Events, their per-month index items and the API users. */
  readonly events: dynamodb.ITableV2;
  /** Idempotency records of POST, PATCH and DELETE, written with the commit; they expire after 24 hours. */
  readonly idempotency: dynamodb.ITableV2;
  /** What the functions' roles are granted: every table of each kind this stage may serve from (see above). */
  readonly grants: { events: dynamodb.ITableV2; idempotency: dynamodb.ITableV2 };
  /** The name prefix of every events (idempotency) table of this stage: own or attached. */
  readonly namePrefixes: { events: string; idempotency: string };
  /**
   * Every stream of every events table of this stage, own or attached (an ARN pattern): what the
   * webhook consumer is granted, so an attach never takes its read of the old stream away while
   * the old mapping drains it (docs/DEPLOY.md, "Restore").
   */
  readonly eventsStreams: string;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    const stack = Stack.of(this);
    // The logical id of a construct at Tables/Events begins with "TablesEvents" (then a hash).
    this.namePrefixes = { events: `${stack.stackName}-${id}Events`, idempotency: `${stack.stackName}-${id}Idempotency` };
    this.refuseAttachedTablesOutsidePrefixes(config);
    const byPrefix = (grantId: string, prefix: string) =>
      dynamodb.TableV2.fromTableAttributes(this, grantId, {
        tableArn: stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: `${prefix}*` }),
      });
    this.grants = {
      events: byPrefix('EventsTablesOfStage', this.namePrefixes.events),
      idempotency: byPrefix('IdempotencyTablesOfStage', this.namePrefixes.idempotency),
    };
    // A stream ARN is the table's ARN and `/stream/<label>`
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html#Streams.Enabling).
    this.eventsStreams = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: `${this.namePrefixes.events}*/stream/*` });
    const properties = tableProperties(config);
    this.events = this.eventsTable(config, properties.events);
    this.manageAttachedTables(config, properties);
    this.idempotency = this.idempotencyTable(config, properties.idempotency);
  }

  private refuseAttachedTablesOutsidePrefixes(config: StageConfig): void {
    for (const [kind, key] of [
      ['events', 'eventsTableName'],
      ['idempotency', 'idempotencyTableName'],
    ] as const) {
      const attached = config.existingTables[kind];
      if (attached !== undefined && !attached.startsWith(this.namePrefixes[kind])) {
        throw new Error(
          `Context "${key}": "${attached}" must start with ${this.namePrefixes[kind]}: the functions may use only tables named so, ` +
            'which is what lets a deploy switch tables without a version losing access (docs/DEPLOY.md, "Restore")',
        );
      }
    }
  }

  // An existing table (a restored one, docs/DEPLOY.md "Restore") is attached by name instead of
  // the stack's own; the stack's own table is then left in place (retained in production).
  // A restore does not copy the stream: the operator turns it on and names it (eventsTableStreamArn,
  // required with the name by readStageConfig), so the webhook pipeline always has its mapping.
  private eventsTable(config: StageConfig, properties: dynamodb.TablePropsV2): dynamodb.ITableV2 {
    const attachedEvents = config.existingTables.events;
    const events = attachedEvents
      ? dynamodb.TableV2.fromTableAttributes(this, 'AttachedEvents', {
          tableName: attachedEvents,
          ...(config.existingTables.eventsStreamArn ? { tableStreamArn: config.existingTables.eventsStreamArn } : {}),
        })
      : new dynamodb.TableV2(this, 'Events', { ...properties, ...retentionOf(config) });
    if (!config.isProduction) {
      Validations.of(this).acknowledge(
        {
          id: MUSEUM_NAG_RULES.pointInTimeRecovery,
          reason: 'A preview stack holds throw-away test data and is destroyed with its pull request; production has PITR.',
        },
        {
          id: MUSEUM_NAG_RULES.deletionProtection,
          reason: 'A preview is destroyed with its pull request, tables included; production tables have deletion protection.',
        },
      );
    }
    return events;
  }

  // An attached table brought under the stack's management (context manageAttachedTables): it is
  // declared with its fixed name and retained, which is what CloudFormation needs to import an
  // existing resource during a deploy with --import-existing-resources
  // (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/import-resources-automatically.html);
  // later deploys keep its deletion protection and point-in-time recovery. The functions keep
  // reading it by name (above), so the importing deploy changes nothing else. Removing the
  // declaration again leaves the table in place (Retain,
  // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/resource-import-revert.html).
  private manageAttachedTables(config: StageConfig, properties: TableProperties): void {
    if (!config.manageAttachedTables) return;
    for (const [kind, id] of [
      ['events', 'ManagedAttachedEvents'],
      ['idempotency', 'ManagedAttachedIdempotency'],
    ] as const) {
      const name = config.existingTables[kind];
      if (name === undefined) continue;
      const managed = new dynamodb.TableV2(this, id, {
        ...properties[kind],
        tableName: name,
        removalPolicy: RemovalPolicy.RETAIN,
        deletionProtection: config.isProduction,
      });
      Validations.of(managed).acknowledge({
        id: MUSEUM_NAG_RULES.redeployable,
        reason:
          'An attached table keeps the name it was restored under; after a deletion of the stack it is attached again by that name (eventsTableName/idempotencyTableName), never created.',
      });
      if (kind === 'idempotency') {
        Validations.of(managed).acknowledge({
          id: MUSEUM_NAG_RULES.pointInTimeRecovery,
          reason: 'Idempotency records only deduplicate retries for 24 hours and expire by TTL: there is nothing to restore.',
        });
      }
    }
  }

  private idempotencyTable(config: StageConfig, properties: dynamodb.TablePropsV2): dynamodb.ITableV2 {
    if (config.existingTables.idempotency) {
      return dynamodb.TableV2.fromTableName(this, 'AttachedIdempotency', config.existingTables.idempotency);
    }
    const idempotency = new dynamodb.TableV2(this, 'Idempotency', { ...properties, ...retentionOf(config) });
    Validations.of(idempotency).acknowledge({
      id: MUSEUM_NAG_RULES.pointInTimeRecovery,
      reason: 'Idempotency records only deduplicate retries for 24 hours and expire by TTL: there is nothing to restore.',
    });
    return idempotency;
  }
}

type TableProperties = Record<'events' | 'idempotency', dynamodb.TablePropsV2>;

// What each kind of table is, whether the stack creates it or manages an attached one.
function tableProperties(config: StageConfig): TableProperties {
  return {
    events: {
      ...keySchema(eventsTable),
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.isProduction },
    },
    idempotency: { ...keySchema(idempotencyTable), billing: dynamodb.Billing.onDemand() },
  };
}

// Production data survives a stack deletion and an accidental `cdk destroy`; a preview's goes with it.
function retentionOf(config: StageConfig): Pick<dynamodb.TablePropsV2, 'removalPolicy' | 'deletionProtection'> {
  return config.isProduction
    ? { removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true }
    : { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false };
}

/** TableV2 key, index, TTL and stream properties from a shared table definition. */
export function keySchema(
  definition: TableDefinition,
): Pick<dynamodb.TablePropsV2, 'partitionKey' | 'sortKey' | 'globalSecondaryIndexes' | 'timeToLiveAttribute' | 'dynamoStream'> {
  const attribute = (key: { name: string; type: 'S' }) => ({ name: key.name, type: dynamodb.AttributeType.STRING });
  return {
    partitionKey: attribute(definition.partitionKey),
    ...(definition.sortKey ? { sortKey: attribute(definition.sortKey) } : {}),
    globalSecondaryIndexes: definition.globalSecondaryIndexes.map((index) => ({
      indexName: index.indexName,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      ...(index.projection.type === 'INCLUDE'
        ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection.attributes] }
        : { projectionType: dynamodb.ProjectionType.KEYS_ONLY }),
    })),
    ...(definition.timeToLiveAttribute ? { timeToLiveAttribute: definition.timeToLiveAttribute } : {}),
    ...(definition.stream ? { dynamoStream: dynamodb.StreamViewType[definition.stream] } : {}),
  };
}
