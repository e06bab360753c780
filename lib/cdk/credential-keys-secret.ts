// The credential keys (functions/auth/credentials.ts): a Secrets Manager secret the stack generates
// (CloudFormation cannot create an SSM SecureString), encrypted with KMS (Secrets Manager's
// AWS managed key, aws/secretsmanager), read only by the authorizer and the two calendar feed
// functions that hash a feed's token (GetSecretValue on this secret alone, granted in the route
// table: lib/cdk/function-permissions.ts) and by an operator's `npm run users -- ... --secret`.
// Its JSON is `{"current":"k1","k1":"<64 random letters and digits>"}` (381 bits); rotation adds a
// key and makes it current (docs/DEPLOY.md, "Rotating the credential key").
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

/** The first key's id, in the generated secret. */
export const FIRST_CREDENTIAL_KEY_ID = 'k1';

export class CredentialKeysSecret extends Construct {
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: 'Keys of the API credentials\' HMAC-SHA-256 hashes (users CLI, authorizer): {"current":"<id>","<id>":"<key>"}',
      // A preview's name is fixed, so CI's role can be granted the previews' secrets by name
      // (lib/cdk/ci-identities-stack.ts); production's is retained with its table, so it has a
      // generated name (a retained fixed name would block the next deploy: Museum-RDP1).
      ...(config.isProduction ? {} : { secretName: `${Stack.of(this).stackName}-credential-keys` }),
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ current: FIRST_CREDENTIAL_KEY_ID }),
        generateStringKey: FIRST_CREDENTIAL_KEY_ID,
        passwordLength: 64,
        excludePunctuation: true,
      },
      // The users' hashes are worthless without it: it lives as long as their table.
      removalPolicy: config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Each stored hash names its key, and removing a key invalidates every credential still hashed under it until its user is re-issued one: rotation is an operator procedure (docs/DEPLOY.md, "Rotating the credential key"), not a Lambda on a schedule.',
    });
  }
}
