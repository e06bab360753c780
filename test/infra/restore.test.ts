// A restore attaches existing tables (restored with point-in-time recovery) to the stage by name:
// the stack then creates no table, and every function and alarm uses the attached ones. The
// attaching deploy shifts traffic by canary in production, so for minutes the old version (still
// reading the table it was published with) and the new one (reading the attached table) serve
// side by side, under one role per function. The proof below reads the synthesized templates of
// the stage before and after each switch and checks that every version reachable through the
// alias keeps, under the role as it is before and after the policy update, exactly the access it
// had when it was published.
import { resourcesOfType, synthesize, type Synthesized } from './synthesize.ts';

const STACK = 'MuseumApi-prod';
const RESTORED = {
  events: `${STACK}-TablesEvents-restored-20261124`,
  idempotency: `${STACK}-TablesIdempotency-restored-20261124`,
};
const RESTORED_AGAIN = { events: `${STACK}-TablesEvents-restored-20261201`, idempotency: `${STACK}-TablesIdempotency-restored-20261201` };
/** The stream the operator turned on (NEW_IMAGE) on a restored table: its ARN is the table's and `/stream/<label>`. */
const streamOf = (table: string) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${table}/stream/2026-11-24T10:00:00.000`;
/** The context that attaches restored tables, the events table's stream included. */
const attach = (tables: { events: string; idempotency: string }) => ({
  eventsTableName: tables.events,
  eventsTableStreamArn: streamOf(tables.events),
  idempotencyTableName: tables.idempotency,
});
const ALARMS = { alarmEmail: 'ops@museum.example' };

let own: Synthesized;
let restored: Synthesized;
let restoredAgain: Synthesized;
let managed: Synthesized;
beforeAll(() => {
  own = synthesize(ALARMS);
  restored = synthesize({ ...ALARMS, ...attach(RESTORED) });
  restoredAgain = synthesize({ ...ALARMS, ...attach(RESTORED_AGAIN) });
  managed = synthesize({ ...ALARMS, ...attach(RESTORED), manageAttachedTables: 'true' });
});

// Values CloudFormation fills in at deploy time; a generated table name is
// `<stack>-<logical id>-<unique id>` (docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-name.html).
const PSEUDO: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'eu-west-1', 'AWS::AccountId': '123456789012' };

function resolve(value: unknown, resources: Record<string, { Type: string }>): string {
  if (typeof value === 'string') return value;
  const ref = (value as { Ref?: string }).Ref;
  if (ref !== undefined) {
    if (PSEUDO[ref]) return PSEUDO[ref];
    if (resources[ref]?.Type === 'AWS::DynamoDB::GlobalTable') return `${STACK}-${ref}-1A2B3C4D5E6F`;
    throw new Error(`cannot resolve Ref ${ref}`);
  }
  const [table, attribute] = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'] ?? [];
  if (table !== undefined && attribute === 'StreamArn' && resources[table]?.Type === 'AWS::DynamoDB::GlobalTable') {
    return streamOf(`${STACK}-${table}-1A2B3C4D5E6F`);
  }
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) return join[1].map((part) => resolve(part, resources)).join(join[0]);
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

/** IAM's resource wildcards: `*` any run of characters, `?` one character. */
function matches(pattern: string, arn: string): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(arn);
}

interface Version {
  tables: { events: string; idempotency?: string };
  /** The role's DynamoDB statements, resources resolved to ARNs. */
  statements: { actions: string[]; resources: string[]; condition: string }[];
}

/** Each function (by logical id) as published by this template: the tables it reads and the statements of its role. */
function versions(app: Synthesized): Map<string, Version> {
  const template = app.apiTemplate.toJSON() as { Resources: Record<string, { Type: string; Properties: any }> };
  const resources = template.Resources;
  const policies = Object.values(resourcesOfType(app.apiTemplate, 'AWS::IAM::Policy'));
  const result = new Map<string, Version>();
  for (const [id, fn] of Object.entries(resourcesOfType(app.apiTemplate, 'AWS::Lambda::Function'))) {
    const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    if (!('TABLE_NAME' in variables)) continue;
    const role = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = policies
      .filter((policy) => JSON.stringify(policy.Properties?.Roles).includes(`"Ref":"${role}"`))
      .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: any[] }).Statement)
      .filter((statement) => [statement.Action].flat().some((action: string) => action.startsWith('dynamodb:')))
      .map((statement) => ({
        actions: [statement.Action].flat() as string[],
        resources: [statement.Resource].flat().map((resource) => resolve(resource, resources)),
        condition: JSON.stringify(statement.Condition ?? null),
      }));
    result.set(id, {
      tables: {
        events: resolve(variables.TABLE_NAME, resources),
        ...(variables.IDEMPOTENCY_TABLE_NAME === undefined ? {} : { idempotency: resolve(variables.IDEMPOTENCY_TABLE_NAME, resources) }),
      },
      statements,
    });
  }
  return result;
}

const tableArn = (name: string) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${name}`;

/** What a role's statements allow on a version's tables and the events table's indexes, as comparable lines. */
function access(statements: Version['statements'], tables: Version['tables'], indexes: string[]): string[] {
  const targets = [
    ['events', tableArn(tables.events)],
    ...indexes.map((index) => [`index ${index}`, `${tableArn(tables.events)}/index/${index}`]),
    ...(tables.idempotency ? [['idempotency', tableArn(tables.idempotency)]] : []),
  ] as const;
  return targets
    .flatMap(([kind, arn]) =>
      statements
        .filter((s) => s.resources.some((pattern) => matches(pattern, arn)))
        .flatMap((s) => s.actions.map((action) => `${kind} ${action} ${s.condition}`)),
    )
    .sort();
}

test('with eventsTableName and idempotencyTableName the stage uses those tables and creates none', () => {
  expect(restored.nagViolations).toEqual([]);
  restored.apiTemplate.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
  // Every function that reads a table in the stack's own state reads the attached ones.
  const attached = versions(restored);
  expect(attached.size).toBeGreaterThan(0);
  expect([...attached.keys()].sort()).toEqual([...versions(own).keys()].sort());
  const published = [...attached.values()];
  for (const version of published) {
    expect(version.tables.events).toBe(RESTORED.events);
    if (version.tables.idempotency) expect(version.tables.idempotency).toBe(RESTORED.idempotency);
  }
  expect(JSON.stringify(restored.apiTemplate.toJSON().Outputs)).toContain(RESTORED.events);
});

test.each([
  ["the stack's own tables to restored ones", () => [own, restored] as const],
  ['restored tables to tables restored again', () => [restored, restoredAgain] as const],
  ["restored tables back to the stack's own", () => [restored, own] as const],
])('switching from %s leaves no version reachable through the alias without the access it was published with', (_, pair) => {
  const [before, after] = pair();
  const indexes = ['byMonth', 'byMonthEnd'];
  const old = versions(before);
  const next = versions(after);
  expect([...next.keys()].sort()).toEqual([...old.keys()].sort());
  for (const [id, oldVersion] of old) {
    const newVersion = next.get(id)!;
    expect(newVersion.tables.events).not.toBe(oldVersion.tables.events);
    // During the canary both versions serve, and the role is the old or the new policy
    // (CloudFormation updates it before it publishes the version and moves the alias).
    for (const version of [oldVersion, newVersion]) {
      const needed = access(version.statements, version.tables, indexes);
      expect(needed.length).toBeGreaterThan(0);
      for (const role of [oldVersion, newVersion]) expect(access(role.statements, version.tables, indexes)).toEqual(needed);
    }
  }
});

test("a table whose name does not carry the stage's prefix is refused at synthesis, naming the prefix", () => {
  const name = 'museum-events-restored-20261124';
  expect(() => synthesize({ ...ALARMS, eventsTableName: name, eventsTableStreamArn: streamOf(name) })).toThrow(
    /"eventsTableName": "museum-events-restored-20261124" must start with MuseumApi-prod-TablesEvents/,
  );
  expect(() => synthesize({ ...ALARMS, idempotencyTableName: `${STACK}-TablesEvents-x` })).toThrow(
    /must start with MuseumApi-prod-TablesIdempotency/,
  );
});

type Resources = Record<
  string,
  { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string }
>;
const resourcesOf = (app: Synthesized) => (app.apiTemplate.toJSON() as { Resources: Resources }).Resources;
const tablesOf = (app: Synthesized) =>
  Object.entries(resourcesOf(app)).filter(([, resource]) => resource.Type === 'AWS::DynamoDB::GlobalTable');

// What CloudFormation does with a table in each state, from its documented behaviour: a resource
// removed from the template is deleted unless its DeletionPolicy is Retain, a resource replaced
// is deleted unless its UpdateReplacePolicy is Retain (aws-attribute-deletionpolicy.html,
// aws-attribute-updatereplacepolicy.html), and a deploy with --import-existing-resources imports
// an existing table only when the template names it statically and retains it
// (import-resources-automatically.html). docs/DEPLOY.md ("Restore") names these pages.
test('in every state (own tables, attached, attached and managed) each table the stack declares is retained on deletion and on replacement', () => {
  for (const app of [own, restored, managed]) {
    for (const [id, table] of tablesOf(app)) {
      expect([id, table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual([id, 'Retain', 'Retain']);
    }
  }
  expect(tablesOf(own)).toHaveLength(2);
  expect(tablesOf(restored)).toHaveLength(0);
});

test("attaching restored tables takes the stack's own tables out of the stack, which keeps them (Retain), and attaching again or managing never brings back an empty one", () => {
  const ownIds = tablesOf(own).map(([id]) => id);
  for (const app of [restored, restoredAgain, managed]) {
    for (const id of ownIds) expect(resourcesOf(app)[id]).toBeUndefined();
  }
});

test('managing the attached tables adds only them, under their fixed names, retained and protected as the own tables are: the deploy imports them and changes nothing else', () => {
  const before = resourcesOf(restored);
  const after = resourcesOf(managed);
  const added = Object.keys(after).filter((id) => !(id in before));
  expect(added.map((id) => after[id]!.Type)).toEqual(['AWS::DynamoDB::GlobalTable', 'AWS::DynamoDB::GlobalTable']);
  // Everything else (functions, roles, alarms, outputs) is unchanged, so the deploy is the import alone.
  expect(Object.fromEntries(Object.entries(after).filter(([id]) => !added.includes(id)))).toEqual(before);
  expect(managed.apiTemplate.toJSON().Outputs).toEqual(restored.apiTemplate.toJSON().Outputs);
  // Import needs a static name (the table's identifier) and Retain; each managed table is what the own one of its kind is.
  const ownByKind = Object.fromEntries(tablesOf(own).map(([id, table]) => [id.includes('Idempotency') ? 'idempotency' : 'events', table]));
  for (const id of added) {
    const table = after[id]!;
    const kind = id.includes('Idempotency') ? 'idempotency' : 'events';
    expect(table.Properties?.TableName).toBe(RESTORED[kind]);
    expect({ ...table.Properties, TableName: undefined }).toEqual({ ...ownByKind[kind]!.Properties, TableName: undefined });
  }
  expect(JSON.stringify(after)).toContain('"PointInTimeRecoveryEnabled":true');
  expect(managed.nagViolations).toEqual([]);
});

test("an attached events table without its stream ARN, or with another table's, is refused at synthesis (the webhook consumer would read no changes)", () => {
  expect(() => synthesize({ ...ALARMS, eventsTableName: RESTORED.events })).toThrow(/"eventsTableName" needs "eventsTableStreamArn"/);
  expect(() => synthesize({ ...ALARMS, eventsTableName: RESTORED.events, eventsTableStreamArn: streamOf(RESTORED_AGAIN.events) })).toThrow(
    /"eventsTableStreamArn": .* is not a stream ARN of MuseumApi-prod-TablesEvents-restored-20261124/,
  );
});

/** The stream statements of the consumer's role (the one with dynamodb:GetRecords), resources resolved. */
function streamGrants(app: Synthesized): { resources: string[]; condition: unknown }[] {
  const resources = resourcesOf(app);
  return Object.values(resourcesOfType(app.apiTemplate, 'AWS::IAM::Policy'))
    .flatMap(
      (policy) =>
        (policy.Properties?.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[] })
          .Statement,
    )
    .filter((statement) => [statement.Action].flat().includes('dynamodb:GetRecords'))
    .map((statement) => ({
      resources: [statement.Resource].flat().map((resource) => resolve(resource, resources)),
      condition: statement.Condition ?? null,
    }));
}

/** The change stream's mapping: its logical id, the stream it reads and its replacement and deletion policies. */
function streamMapping(app: Synthesized): { id: string; stream: string; updateReplacePolicy?: string; deletionPolicy?: string } {
  const resources = resourcesOf(app);
  const mappings = Object.entries(resourcesOfType(app.apiTemplate, 'AWS::Lambda::EventSourceMapping')).filter(
    ([, mapping]) =>
      JSON.stringify(mapping.Properties?.EventSourceArn).includes('Stream') ||
      String(mapping.Properties?.EventSourceArn).includes('/stream/'),
  );
  expect(mappings).toHaveLength(1);
  const [id, mapping] = mappings[0]!;
  const { UpdateReplacePolicy: updateReplacePolicy, DeletionPolicy: deletionPolicy } = resources[id]!;
  return { id, stream: resolve(mapping.Properties?.EventSourceArn, resources), updateReplacePolicy, deletionPolicy };
}

test("the consumer's mapping reads the attached table's stream, and its role may read every stream of the stage's events tables, in every state alike", () => {
  expect(streamMapping(restored).stream).toBe(streamOf(RESTORED.events));
  expect(streamMapping(restoredAgain).stream).toBe(streamOf(RESTORED_AGAIN.events));
  expect(streamMapping(own).stream).toMatch(new RegExp(`:table/${STACK}-TablesEvents[^/]+/stream/`));
  const grant = streamGrants(own);
  expect(grant).toHaveLength(1);
  // The same statement before and after every switch: an attach never changes what the consumer may read.
  for (const app of [restored, restoredAgain, managed]) expect(streamGrants(app)).toEqual(grant);
  const patterns = grant[0]!.resources;
  const readable = (stream: string) => patterns.some((pattern) => matches(pattern, stream));
  for (const app of [own, restored, restoredAgain]) expect(readable(streamMapping(app).stream)).toBe(true);
  // Nothing but this stage's events tables' streams: not a table itself, not another stage's or kind's stream.
  expect(readable(tableArn(RESTORED.events))).toBe(false);
  expect(readable(streamOf('MuseumApi-pr-1-TablesEvents1A2B-XYZ'))).toBe(false);
  expect(readable(streamOf(RESTORED.idempotency))).toBe(false);
});

// An attach changes the mapping's EventSourceArn, which CloudFormation cannot update in place: it
// replaces the mapping (aws-resource-lambda-eventsourcemapping.html, EventSourceArn "Update
// requires: Replacement"), creating the new one first and deleting the old one in its cleanup
// phase unless its UpdateReplacePolicy is Retain (using-cfn-updating-stacks-update-behaviors.html,
// aws-attribute-updatereplacepolicy.html). Retained, the old mapping keeps delivering the old
// table's last changes; with the grant above it may. docs/DEPLOY.md ("Restore") argues it step by step.
test.each([
  ["the stack's own table to a restored one", () => [own, restored] as const],
  ['a restored table to one restored again', () => [restored, restoredAgain] as const],
  ["a restored table back to the stack's own", () => [restored, own] as const],
])(
  'switching from %s replaces the stream mapping (same logical id, another stream) and retains the old one, which keeps its grant',
  (_, pair) => {
    const [before, after] = pair();
    const old = streamMapping(before);
    const next = streamMapping(after);
    expect(next.id).toBe(old.id);
    expect(next.stream).not.toBe(old.stream);
    for (const mapping of [old, next]) expect(mapping.updateReplacePolicy).toBe('Retain');
    // Removing the stack still removes its mapping (nothing else is retained with it).
    expect(next.deletionPolicy).toBeUndefined();
    // The role after the switch may still read the old stream, and the role before it the new one.
    for (const [app, stream] of [
      [after, old.stream],
      [before, next.stream],
    ] as const) {
      expect(streamGrants(app).some((grant) => grant.resources.some((pattern) => matches(pattern, stream)))).toBe(true);
    }
  },
);

test('managing attached tables without naming them is refused at synthesis (the stack would create new, empty ones)', () => {
  expect(() => synthesize({ ...ALARMS, manageAttachedTables: 'true' })).toThrow(
    /"manageAttachedTables" needs "eventsTableName" or "idempotencyTableName"/,
  );
});
