// Replaces @smithy/core's IMDS region lookup in Lambda bundles (see scripts/build.ts). The SDK asks
// the EC2 instance metadata service for a region only when AWS_REGION (and the config file) name
// none, or in defaults mode "auto" without AWS_EXECUTION_ENV: Lambda sets AWS_REGION and
// AWS_EXECUTION_ENV and the local API sets AWS_REGION, so it never runs. Should it be reached, the
// answer is the SDK's own with AWS_EC2_METADATA_DISABLED set: no region (and no off-host traffic).
export const getInstanceMetadataRegion = async (): Promise<string | undefined> => undefined;
