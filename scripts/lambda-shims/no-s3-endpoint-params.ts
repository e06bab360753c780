// Replaces @smithy/core's S3 endpoint-parameter customisation in Lambda bundles (see
// scripts/build.ts). The endpoint resolver calls it only for a client whose serviceId is "s3";
// these functions have a DynamoDB client only, so it never runs.
export function resolveParamsForS3(): never {
  throw new Error('S3 endpoint customisations are not bundled into these functions');
}
