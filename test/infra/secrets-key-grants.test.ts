// The functions' grants on the webhook secrets' KMS key require the encryption context the code
// always passes (functions/webhooks/webhook-secrets.ts: the subscription's id under one key), so a
// role cannot decrypt a ciphertext outside a subscription nor encrypt for none
// (https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html#conditions-kms-encryption-context).
import { SUBSCRIPTION_ID_PATTERN } from '../../functions/webhooks/webhook-schema.ts';
import { SECRET_ENCRYPTION_CONTEXT_KEY } from '../../functions/webhooks/subscription-rules.ts';
import { resourcesOfType, synthesize } from './synthesize.ts';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

test.each([
  ['production', { alarmEmail: 'ops@museum.example' }],
  ['a preview', { stage: 'pr-5' }],
])('%s: every Encrypt and Decrypt grant on the secrets key requires the subscription id as the only encryption context', (_, context) => {
  const template = synthesize(context).apiTemplate;
  const [keyId, ...others] = Object.keys(resourcesOfType(template, 'AWS::KMS::Key'));
  expect(others).toEqual([]);
  const statements = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement)
    .filter((statement) => JSON.stringify(statement.Resource).includes(`"${keyId}"`));
  const actions = statements.flatMap((statement) => [statement.Action].flat());
  // The create and rotate functions encrypt, the delivery function decrypts; nothing else touches the key.
  expect(new Set(actions)).toEqual(new Set(['kms:Encrypt', 'kms:Decrypt']));
  expect(statements.length).toBeGreaterThanOrEqual(3);
  for (const statement of statements) {
    expect(statement.Condition).toEqual({
      StringLike: { [`kms:EncryptionContext:${SECRET_ENCRYPTION_CONTEXT_KEY}`]: 'wh_*' },
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [SECRET_ENCRYPTION_CONTEXT_KEY] },
    });
  }
});

test("the condition's value admits every subscription id the API hands out (`wh_` and 22 characters)", () => {
  const id = `wh_${'A'.repeat(22)}`;
  expect(SUBSCRIPTION_ID_PATTERN.test(id)).toBe(true);
  expect(SUBSCRIPTION_ID_PATTERN.source.startsWith('^wh_')).toBe(true);
});
