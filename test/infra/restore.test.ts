// A restore attaches existing tables (restored from PITR or AWS Backup) to the stage by name:
// the stack then creates no table, and every function, grant and alarm uses the attached ones.
import { resourcesOfType, synthesize } from './synthesize.ts';

const EVENTS = 'museum-events-restored-20261124';
const IDEMPOTENCY = 'museum-idempotency-restored-20261124';

test('with eventsTableName and idempotencyTableName the stage uses those tables and creates none', () => {
  const app = synthesize({ alarmEmail: 'ops@museum.example', eventsTableName: EVENTS, idempotencyTableName: IDEMPOTENCY });
  expect(app.nagViolations).toEqual([]);
  app.apiTemplate.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
  const handlers = Object.values(resourcesOfType(app.apiTemplate, 'AWS::Lambda::Function'))
    .map((fn) => (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
    .filter((variables) => 'TABLE_NAME' in variables);
  expect(handlers).toHaveLength(6);
  for (const variables of handlers) {
    expect(variables.TABLE_NAME).toBe(EVENTS);
    if ('IDEMPOTENCY_TABLE_NAME' in variables) expect(variables.IDEMPOTENCY_TABLE_NAME).toBe(IDEMPOTENCY);
  }
  const policies = JSON.stringify(resourcesOfType(app.apiTemplate, 'AWS::IAM::Policy'));
  expect(policies).toContain(`:table/${EVENTS}`);
  expect(policies).toContain(`:table/${IDEMPOTENCY}`);
  expect(JSON.stringify(app.apiTemplate.toJSON().Outputs)).toContain(EVENTS);
});
