// The local run's KMS: Encrypt and Decrypt with one symmetric key (SYMMETRIC_DEFAULT), AES-256-GCM
// under a key file of the data directory (<data>/webhooks/kms-key, 0600 in a 0700 directory, so
// secrets stored there stay readable after a restart; a new key per in-memory run). The encryption
// context is authenticated data: a ciphertext decrypts only with the context it was encrypted
// with, as KMS documents (InvalidCiphertextException otherwise). The ciphertext format is this
// stand-in's own. As the run's other stand-ins (lib/local/aws-json-endpoint.ts), it answers only
// the run's access key id: unsigned, 403 MissingAuthenticationToken (Common Errors); another key
// id, 400 UnrecognizedClientException (what KMS answers an unknown key id: not on KMS's pages;
// community reports such as BerriAI/litellm#6637, with DynamoDB's documented status). Members are
// bounded as the API reference bounds them: Plaintext 1 to 4096 bytes, CiphertextBlob 1 to 6144
// bytes, KeyId required by Encrypt (ValidationException); a request body over 64 KiB (far above
// any valid Encrypt or Decrypt of this run) is refused before it is read.
// https://docs.aws.amazon.com/kms/latest/APIReference/API_Encrypt.html
// https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html
// https://docs.aws.amazon.com/kms/latest/APIReference/CommonErrors.html
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AwsJsonError, startAwsJsonEndpoint, text, type AwsJsonEndpoint } from './aws-json-endpoint.ts';
import { privateDirectory, writePrivateFile } from './private-files.ts';

export const LOCAL_KMS_KEY_ID = 'alias/museum-webhook-secrets';
const KEY_ARN = 'arn:aws:kms:local:000000000000:key/00000000-0000-4000-8000-000000000001';
const MAGIC = Buffer.from('mkms1');
const MAX_PLAINTEXT_BYTES = 4096;
const MAX_CIPHERTEXT_BYTES = 6144;
export const MAX_KMS_REQUEST_BYTES = 64 * 1024;

/** The context as authenticated data: its pairs sorted by key, so the order given does not matter. */
function contextBytes(context: unknown): Buffer {
  const pairs = Object.entries((context ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(pairs), 'utf8');
}

/** The key of `keyFile` (made on first use), or a fresh one when there is no file. */
function loadKey(keyFile: string | undefined): Buffer {
  if (!keyFile) return randomBytes(32);
  privateDirectory(dirname(keyFile));
  if (existsSync(keyFile)) return readFileSync(keyFile);
  const key = randomBytes(32);
  writePrivateFile(keyFile, key);
  return key;
}

/** A blob member's bytes, or KMS's ValidationException when its length is outside 1 to `maximum`. */
function blob(value: unknown, member: string, maximum: number): Buffer {
  const bytes = Buffer.from(text(value), 'base64');
  if (bytes.length === 0 || bytes.length > maximum)
    throw new AwsJsonError(
      'ValidationException',
      `1 validation error detected: Value at '${member}' failed to satisfy constraint: Member must have length between 1 and ${maximum}`,
    );
  return bytes;
}

function checkKey(keyId: unknown, required: boolean): void {
  if (keyId === undefined && required)
    throw new AwsJsonError(
      'ValidationException',
      "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null",
    );
  if (keyId !== undefined && keyId !== LOCAL_KMS_KEY_ID && keyId !== KEY_ARN)
    throw new AwsJsonError('NotFoundException', `Key '${text(keyId)}' does not exist`);
}

export async function startKmsStandIn(options: { keyFile?: string; accessKeyId: string; port?: number }): Promise<AwsJsonEndpoint> {
  const key = loadKey(options.keyFile);
  return startAwsJsonEndpoint({
    name: 'KMS',
    contentType: 'application/x-amz-json-1.1',
    accessKeyId: options.accessKeyId,
    ...(options.port ? { port: options.port } : {}),
    maxRequestBytes: MAX_KMS_REQUEST_BYTES,
    unsigned: () =>
      new AwsJsonError(
        'MissingAuthenticationToken',
        'The request must contain either a valid (registered) AWS access key ID or X.509 certificate.',
        403,
      ),
    foreignKey: () => new AwsJsonError('UnrecognizedClientException', 'The security token included in the request is invalid.'),
    operations: {
      Encrypt: (input) => {
        checkKey(input.KeyId, true);
        const plaintext = blob(input.Plaintext, 'plaintext', MAX_PLAINTEXT_BYTES);
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
        checkKey(input.KeyId, false);
        const sealed = blob(input.CiphertextBlob, 'ciphertextBlob', MAX_CIPHERTEXT_BYTES);
        if (sealed.length < MAGIC.length + 28 || !sealed.subarray(0, MAGIC.length).equals(MAGIC)) {
          throw new AwsJsonError('InvalidCiphertextException', 'The ciphertext is not one of this key');
        }
        const iv = sealed.subarray(MAGIC.length, MAGIC.length + 12);
        const tag = sealed.subarray(MAGIC.length + 12, MAGIC.length + 28);
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, iv);
          decipher.setAAD(contextBytes(input.EncryptionContext));
          decipher.setAuthTag(tag);
          const plaintext = Buffer.concat([decipher.update(sealed.subarray(MAGIC.length + 28)), decipher.final()]);
          return { Plaintext: plaintext.toString('base64'), KeyId: KEY_ARN, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
        } catch {
          throw new AwsJsonError('InvalidCiphertextException', 'The ciphertext or its encryption context does not match');
        }
      },
    },
  });
}
