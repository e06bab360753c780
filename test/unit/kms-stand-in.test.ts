// The local KMS stand-in (lib/local/kms-stand-in.ts), spoken to with the real @aws-sdk/client-kms as
// the webhook functions speak to KMS (functions/webhooks/webhook-secrets.ts), against the rules of
// Encrypt and Decrypt (https://docs.aws.amazon.com/kms/latest/APIReference/API_Encrypt.html,
// https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html): who it answers, the
// sizes it accepts, the encryption context, and where its key is kept.
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import type { AwsJsonEndpoint } from '../../lib/local/aws-json-endpoint.ts';
import { freePort } from '../../lib/local/dynamodb-local.ts';
import { LOCAL_KMS_KEY_ID, MAX_KMS_REQUEST_BYTES, startKmsStandIn } from '../../lib/local/kms-stand-in.ts';

const KEY_ID = 'RUNKEYID0123456789';
const CONTEXT = { subscriptionId: 'sub_1' };
let directory: string;
let kms: AwsJsonEndpoint;

const kmsClient = (accessKeyId = KEY_ID) =>
  new KMSClient({ endpoint: kms.url, region: 'eu-west-1', credentials: { accessKeyId, secretAccessKey: 'local' }, maxAttempts: 1 });

async function failure(call: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  const error = (await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as { name: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!error) throw new Error('the call succeeded');
  return { name: error.name, status: error.$metadata?.httpStatusCode };
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-kms-'));
  // A directory an earlier version left readable by others.
  mkdirSync(join(directory, 'webhooks'), { mode: 0o755 });
  chmodSync(join(directory, 'webhooks'), 0o755);
  writeFileSync(join(directory, 'webhooks', 'sqs.json'), '{}', { mode: 0o644 });
  kms = await startKmsStandIn({ keyFile: join(directory, 'webhooks', 'kms-key'), accessKeyId: KEY_ID });
});

afterAll(async () => {
  await kms.close();
  await rm(directory, { recursive: true, force: true });
});

test('Encrypt then Decrypt with the same encryption context gives the plaintext back; another context is InvalidCiphertextException', async () => {
  const client = kmsClient();
  const plaintext = Buffer.from('whsec_secret');
  const { CiphertextBlob } = await client.send(
    new EncryptCommand({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: plaintext, EncryptionContext: CONTEXT }),
  );
  const decrypted = await client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: CONTEXT }));
  expect(Buffer.from(decrypted.Plaintext ?? []).toString()).toBe('whsec_secret');
  expect(await failure(client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { subscriptionId: 'sub_2' } })))).toMatchObject({
    name: 'InvalidCiphertextException',
  });
  client.destroy();
});

test('only the run’s access key id is answered: another is UnrecognizedClientException, an unsigned request 403 MissingAuthenticationToken', async () => {
  const client = kmsClient();
  const { CiphertextBlob } = await client.send(
    new EncryptCommand({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: Buffer.from('s'), EncryptionContext: CONTEXT }),
  );
  client.destroy();
  const other = kmsClient('SOMEONEELSE');
  expect(await failure(other.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: CONTEXT })))).toMatchObject({
    name: 'UnrecognizedClientException',
    status: 400,
  });
  other.destroy();
  const unsigned = await fetch(kms.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.Decrypt' },
    body: JSON.stringify({ CiphertextBlob: Buffer.from(CiphertextBlob ?? []).toString('base64'), EncryptionContext: CONTEXT }),
  });
  expect(unsigned.status).toBe(403);
  expect(((await unsigned.json()) as { __type: string }).__type).toBe('MissingAuthenticationToken');
});

test('Plaintext is 1 to 4096 bytes, CiphertextBlob 1 to 6144, KeyId required; a body over the bound is refused unread (413)', async () => {
  const client = kmsClient();
  await client.send(new EncryptCommand({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: Buffer.alloc(4096, 1) }));
  expect(await failure(client.send(new EncryptCommand({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: Buffer.alloc(4097, 1) })))).toMatchObject({
    name: 'ValidationException',
    status: 400,
  });
  expect(await failure(client.send(new DecryptCommand({ CiphertextBlob: Buffer.alloc(6145, 1) })))).toMatchObject({
    name: 'ValidationException',
  });
  expect(await failure(client.send(new EncryptCommand({ Plaintext: Buffer.from('s') } as never)))).toMatchObject({
    name: 'ValidationException',
  });
  const oversized = await fetch(kms.url, {
    method: 'POST',
    headers: {
      Authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/20260101/eu-west-1/kms/aws4_request, SignedHeaders=host, Signature=0`,
      'X-Amz-Target': 'TrentService.Encrypt',
    },
    body: JSON.stringify({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: 'AA==', EncryptionContext: { padding: 'x'.repeat(MAX_KMS_REQUEST_BYTES) } }),
  });
  expect(oversized.status).toBe(413);
  client.destroy();
});

test('the key is a 0600 file in a 0700 directory, and an earlier run’s readable files there are made private', () => {
  expect(statSync(join(directory, 'webhooks')).mode & 0o777).toBe(0o700);
  expect(statSync(join(directory, 'webhooks', 'kms-key')).mode & 0o777).toBe(0o600);
  expect(statSync(join(directory, 'webhooks', 'sqs.json')).mode & 0o777).toBe(0o600);
});

test('its port can be set (MUSEUM_KMS_PORT), and a port in use is refused with the port named', async () => {
  const port = await freePort();
  const pinned = await startKmsStandIn({ accessKeyId: KEY_ID, port });
  expect(pinned.url).toBe(`http://127.0.0.1:${port}`);
  await expect(startKmsStandIn({ accessKeyId: KEY_ID, port })).rejects.toThrow(
    `The KMS stand-in cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
  );
  await pinned.close();
});
