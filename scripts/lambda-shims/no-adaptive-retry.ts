// Replaces @smithy/core's adaptive retry strategy (and its client-side rate limiter, about 3.4 KB
// minified) in Lambda bundles (see scripts/build.ts). The SDK builds it only for retry mode
// "adaptive"; the functions' client sets retryMode 'standard' (functions/shared/dynamodb-client.ts),
// which takes precedence over AWS_RETRY_MODE and the config file, so it never runs.
export class AdaptiveRetryStrategy {
  constructor() {
    throw new Error('Adaptive retry mode is not bundled: the DynamoDB client is configured with retryMode "standard"');
  }
}
