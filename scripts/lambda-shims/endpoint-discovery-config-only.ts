// Replaces @aws-sdk/middleware-endpoint-discovery in Lambda bundles (see scripts/build.ts).
// This DynamoDB client's commands no longer add the endpoint-discovery middleware (their
// middleware lists are empty), yet the client still resolves its configuration, which allocates
// an LRU endpoint cache that nothing reads: @aws-sdk/endpoint-cache, mnemonist and obliterator,
// about 8 KB minified. The configuration is resolved exactly as before, minus that cache.
// Should a future SDK use the middleware again, its import has no match here and the build fails.
import type { EndpointDiscoveryConfigOptions } from '@aws-sdk/middleware-endpoint-discovery';
export { NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS } from '@aws-sdk/middleware-endpoint-discovery';

interface EndpointDiscoveryInput {
  endpointDiscoveryEnabled?: boolean | undefined;
  endpointDiscoveryEnabledProvider: () => Promise<boolean | undefined>;
}

export function resolveEndpointDiscoveryConfig<T extends EndpointDiscoveryInput>(
  input: T,
  { endpointDiscoveryCommandCtor }: EndpointDiscoveryConfigOptions,
) {
  const { endpointDiscoveryEnabled, endpointDiscoveryEnabledProvider } = input;
  return Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled:
      endpointDiscoveryEnabled !== undefined ? () => Promise.resolve(endpointDiscoveryEnabled) : endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: endpointDiscoveryEnabled !== undefined,
  });
}
