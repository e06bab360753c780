// The local run's Secrets Manager stand-in (lib/local/secrets-manager-stand-in.ts), driven by the real
// SDK client and by the authorizer's own key reader (functions/auth/credential-keys.ts), reaching it
// through the SDK's service-specific endpoint variable as the local run's functions do. AWS's
// GetSecretValue: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { credentialKeys } from '../../functions/auth/credential-keys.ts';
import { newCredentialKeysText } from '../../functions/auth/credentials.ts';
import { credentialKeysFileIn, ensureCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import {
  LOCAL_CREDENTIAL_KEYS_SECRET,
  startSecretsManagerStandIn,
  type SecretsManagerStandIn,
} from '../../lib/local/secrets-manager-stand-in.ts';
import { statSync } from 'node:fs';

const KEY_ID = 'LOCALKEYID0123456789';
let directory: string;
let file: string;
let standIn: SecretsManagerStandIn;
const saved = { ...process.env };

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-secrets-'));
  file = credentialKeysFileIn(join(directory, 'data'));
  await ensureCredentialKeysFile(file);
  standIn = await startSecretsManagerStandIn({ secrets: { [LOCAL_CREDENTIAL_KEYS_SECRET]: file }, accessKeyId: KEY_ID });
  // What the local run gives the functions (lib/local/local-environment.ts handlerEnvironment).
  Object.assign(process.env, {
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: KEY_ID,
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: standIn.endpoint,
  });
});

afterAll(async () => {
  process.env = saved;
  await standIn.close();
  await rm(directory, { recursive: true, force: true });
});

const client = (accessKeyId = KEY_ID) => new SecretsManagerClient({ region: 'local', credentials: { accessKeyId, secretAccessKey: 'x' } });

test('the key file is created once, readable by its owner only', async () => {
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const before = statSync(file).mtimeMs;
  await ensureCredentialKeysFile(file);
  expect(statSync(file).mtimeMs).toBe(before);
});

test('GetSecretValue (the SDK, endpoint from AWS_ENDPOINT_URL_SECRETS_MANAGER) answers the file as SecretString, with AWS fields', async () => {
  const answer = await client().send(new GetSecretValueCommand({ SecretId: LOCAL_CREDENTIAL_KEYS_SECRET }));
  expect(answer.SecretString).toBe(await import('node:fs/promises').then((fs) => fs.readFile(file, 'utf8')));
  expect(answer.Name).toBe(LOCAL_CREDENTIAL_KEYS_SECRET);
  expect(answer.ARN).toMatch(/^arn:aws:secretsmanager:local:\d{12}:secret:museum-credential-keys$/);
  expect(answer.VersionStages).toEqual(['AWSCURRENT']);
  expect(answer.VersionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(answer.CreatedDate).toBeInstanceOf(Date);
  // By ARN too, as AWS accepts.
  expect((await client().send(new GetSecretValueCommand({ SecretId: answer.ARN }))).SecretString).toBe(answer.SecretString);
});

test("the authorizer's own reader gets the keys through it", async () => {
  const keys = await credentialKeys(LOCAL_CREDENTIAL_KEYS_SECRET);
  expect(keys.current).toBe('k1');
  expect(keys.keys.get('k1')?.length).toBeGreaterThanOrEqual(32);
});

test('a changed file is a new version', async () => {
  const first = await client().send(new GetSecretValueCommand({ SecretId: LOCAL_CREDENTIAL_KEYS_SECRET }));
  const other = join(directory, 'other.json');
  await writeFile(other, newCredentialKeysText('k2'));
  const second = await startSecretsManagerStandIn({ secrets: { other }, accessKeyId: KEY_ID });
  try {
    const answer = await new SecretsManagerClient({ region: 'local', endpoint: second.endpoint }).send(
      new GetSecretValueCommand({ SecretId: 'other' }),
    );
    expect(answer.VersionId).not.toBe(first.VersionId);
    expect(JSON.parse(answer.SecretString as string)).toMatchObject({ current: 'k2' });
  } finally {
    await second.close();
  }
});

test('an unknown secret is ResourceNotFoundException; another access key id is refused; other actions are not served', async () => {
  await expect(client().send(new GetSecretValueCommand({ SecretId: 'no-such-secret' }))).rejects.toMatchObject({
    name: 'ResourceNotFoundException',
    $metadata: { httpStatusCode: 400 },
  });
  await expect(client('SOMEONEELSE').send(new GetSecretValueCommand({ SecretId: LOCAL_CREDENTIAL_KEYS_SECRET }))).rejects.toMatchObject({
    name: 'UnrecognizedClientException',
  });
  const { ListSecretsCommand } = await import('@aws-sdk/client-secrets-manager');
  await expect(client().send(new ListSecretsCommand({}))).rejects.toMatchObject({ name: 'UnknownOperationException' });
});
