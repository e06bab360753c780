// Values the global setup hands to every test file through environment variables.
export const TEST_USERS = {
  editor: { username: 'admin', password: 'test-admin-password-1' },
  viewer: { username: 'visitor', password: 'test-viewer-password-1' },
} as const;

export function testEnvironment() {
  const url = process.env.MUSEUM_API_URL;
  const dynamodbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!url || !dynamodbEndpoint) throw new Error('Run the tests with `npm test` (the global setup starts the local API)');
  return { url, dynamodbEndpoint, tableName: process.env.TEST_TABLE_NAME ?? '', logFile: process.env.TEST_LOCAL_API_LOG ?? '' };
}

/** The local API behind the fault proxy (the first one when injection is off): see global-setup.ts. */
export function injectedApiUrl(): string {
  return process.env.MUSEUM_INJECTED_API_URL ?? testEnvironment().url;
}
