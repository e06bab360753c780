// Webhook signing secrets: generated here (Standard Webhooks' form: `whsec_` + base64 of the key,
// 32 random bytes), shown once, stored only encrypted with the customer managed KMS key
// (WEBHOOK_SECRETS_KEY_ID), the subscription id bound in as encryption context so a ciphertext
// copied to another subscription does not decrypt. Never logged.
// https://docs.aws.amazon.com/kms/latest/developerguide/encrypt_context.html
import { randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { requiredEnv } from '../environment.ts';
import { SECRET_ENCRYPTION_CONTEXT_KEY } from './subscription-rules.ts';

export const SECRET_PREFIX = 'whsec_';
/** Key bytes per secret (the specification allows 24 to 64). */
const SECRET_BYTES = 32;

let client: KMSClient | undefined;
function kms(): KMSClient {
  // The endpoint comes from the SDK's AWS_ENDPOINT_URL_KMS, which the local run points at its stand-in.
  return (client ??= new KMSClient({ maxAttempts: 3 }));
}

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export async function encryptSecret(secret: string, subscriptionId: string, abortSignal?: AbortSignal): Promise<string> {
  const answer = await kms().send(
    new EncryptCommand({
      KeyId: requiredEnv('WEBHOOK_SECRETS_KEY_ID'),
      Plaintext: Buffer.from(secret, 'utf8'),
      EncryptionContext: { [SECRET_ENCRYPTION_CONTEXT_KEY]: subscriptionId },
    }),
    { abortSignal },
  );
  if (!answer.CiphertextBlob) throw new Error('KMS returned no ciphertext');
  return Buffer.from(answer.CiphertextBlob).toString('base64');
}

export async function decryptSecret(ciphertext: string, subscriptionId: string): Promise<string> {
  const answer = await kms().send(
    new DecryptCommand({
      CiphertextBlob: Buffer.from(ciphertext, 'base64'),
      EncryptionContext: { [SECRET_ENCRYPTION_CONTEXT_KEY]: subscriptionId },
    }),
  );
  if (!answer.Plaintext) throw new Error('KMS returned no plaintext');
  return Buffer.from(answer.Plaintext).toString('utf8');
}
