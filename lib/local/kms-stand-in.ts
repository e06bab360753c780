// The local run's KMS: Encrypt and Decrypt with one symmetric key (SYMMETRIC_DEFAULT), AES-256-GCM
// under a key file of the data directory (kept beside DynamoDB Local's files, so secrets stored
// there stay readable after a restart; a new key per in-memory run). The encryption context is
// authenticated data: a ciphertext decrypts only with the context it was encrypted with, as KMS
// documents (InvalidCiphertextException otherwise). The ciphertext format is this stand-in's own.
// https://docs.aws.amazon.com/kms/latest/APIReference/API_Encrypt.html
// https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AwsJsonError, startAwsJsonEndpoint, text, type AwsJsonEndpoint } from './aws-json-endpoint.ts';

export const LOCAL_KMS_KEY_ID = 'alias/museum-webhook-secrets';
const KEY_ARN = 'arn:aws:kms:local:000000000000:key/00000000-0000-4000-8000-000000000001';
const MAGIC = Buffer.from('mkms1');

/** The context as authenticated data: its pairs sorted by key, so the order given does not matter. */
function contextBytes(context: unknown): Buffer {
  const pairs = Object.entries((context ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(pairs), 'utf8');
}

/** The key of `keyFile` (made on first use), or a fresh one when there is no file. */
function loadKey(keyFile: string | undefined): Buffer {
  if (!keyFile) return randomBytes(32);
  if (existsSync(keyFile)) return readFileSync(keyFile);
  mkdirSync(dirname(keyFile), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(keyFile, key, { mode: 0o600 });
  return key;
}

export async function startKmsStandIn(keyFile?: string): Promise<AwsJsonEndpoint> {
  const key = loadKey(keyFile);
  const checkKey = (keyId: unknown) => {
    if (keyId !== undefined && keyId !== LOCAL_KMS_KEY_ID && keyId !== KEY_ARN) {
      throw new AwsJsonError('NotFoundException', `Key '${text(keyId)}' does not exist`);
    }
  };
  return startAwsJsonEndpoint('application/x-amz-json-1.1', {
    Encrypt: (input) => {
      checkKey(input.KeyId);
      const plaintext = Buffer.from(text(input.Plaintext), 'base64');
      if (plaintext.length === 0 || plaintext.length > 4096)
        throw new AwsJsonError('ValidationException', 'Plaintext must be 1 to 4096 bytes');
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(contextBytes(input.EncryptionContext));
      const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return {
        CiphertextBlob: Buffer.concat([MAGIC, iv, cipher.getAuthTag(), sealed]).toString('base64'),
        KeyId: KEY_ARN,
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
    Decrypt: (input) => {
      checkKey(input.KeyId);
      const blob = Buffer.from(text(input.CiphertextBlob), 'base64');
      if (blob.length < MAGIC.length + 28 || !blob.subarray(0, MAGIC.length).equals(MAGIC)) {
        throw new AwsJsonError('InvalidCiphertextException', 'The ciphertext is not one of this key');
      }
      const iv = blob.subarray(MAGIC.length, MAGIC.length + 12);
      const tag = blob.subarray(MAGIC.length + 12, MAGIC.length + 28);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(contextBytes(input.EncryptionContext));
        decipher.setAuthTag(tag);
        const plaintext = Buffer.concat([decipher.update(blob.subarray(MAGIC.length + 28)), decipher.final()]);
        return { Plaintext: plaintext.toString('base64'), KeyId: KEY_ARN, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      } catch {
        throw new AwsJsonError('InvalidCiphertextException', 'The ciphertext or its encryption context does not match');
      }
    },
  });
}
