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
const ALARMS = { alarmEmail: 'ops@museum.example' };

let own: Synthesized;
let restored: Synthesized;
let restoredAgain: Synthesized;
beforeAll(() => {
  own = synthesize(ALARMS);
  restored = synthesize({ ...ALARMS, eventsTableName: RESTORED.events, idempotencyTableName: RESTORED.idempotency });
  restoredAgain = synthesize({ ...ALARMS, eventsTableName: RESTORED_AGAIN.events, idempotencyTableName: RESTORED_AGAIN.idempotency });
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
  const published = [...versions(restored).values()];
  expect(published).toHaveLength(6);
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
  expect(() => synthesize({ ...ALARMS, eventsTableName: 'museum-events-restored-20261124' })).toThrow(
    /"eventsTableName": "museum-events-restored-20261124" must start with MuseumApi-prod-TablesEvents/,
  );
  expect(() => synthesize({ ...ALARMS, idempotencyTableName: `${STACK}-TablesEvents-x` })).toThrow(
    /must start with MuseumApi-prod-TablesIdempotency/,
  );
});
