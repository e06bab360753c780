// Authentication and authorization through the local gateway and the real authorizer bundle.
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { api, apiRetrying, basicAuthorization, createEvent, sampleEvent, type Credentials } from '../support/api-client.ts';
import { TEST_USERS, testCredentialHash, testEnvironment } from '../support/test-environment.ts';

let eventId: string;
const routes = () =>
  [
    { method: 'POST', path: '/special-events', json: sampleEvent(), editorOnly: true },
    { method: 'GET', path: '/special-events', editorOnly: false },
    { method: 'GET', path: `/special-events/${eventId}`, editorOnly: false },
    { method: 'PATCH', path: `/special-events/${eventId}`, json: { price: 26 }, editorOnly: true },
    { method: 'DELETE', path: `/special-events/${eventId}`, editorOnly: true },
  ] as const;

const rejected: [string, Credentials][] = [
  ['no credentials', 'none'],
  ['a non-Basic scheme', { header: 'Bearer abc.def.ghi' }],
  ['Basic without a colon', { header: `Basic ${Buffer.from('adminpassword').toString('base64')}` }],
  ['Basic with broken base64', { header: 'Basic %%%notbase64%%%' }],
  ['an empty Basic value', { header: 'Basic ' }],
  ['a wrong password', { username: TEST_USERS.editor.username, password: 'not-the-password' }],
  ['an unknown user', { username: 'nobody', password: 'whatever-password' }],
];

beforeAll(async () => {
  eventId = (await createEvent()).eventId;
});

/**
 * A request whose credentials must be refused. The authorizer may turn a verification away before
 * checking it (503 with Retry-After, documented for every operation: docs/RELIABILITY.md, "Brute
 * force") when a busy machine has too many waiting; then it is retried as the answer says, and
 * what must hold is the final answer: never a success.
 */
function refused(method: string, path: string, options: Parameters<typeof api>[2]) {
  return apiRetrying(method, path, options, { statuses: [503], attempts: 5 });
}

describe.each(rejected)('with %s', (_, credentials) => {
  test('every operation is a 401 problem with a Basic challenge, and nothing changes', async () => {
    for (const route of routes()) {
      const response = await refused(route.method, route.path, { as: credentials, ...('json' in route ? { json: route.json } : {}) });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="museum", charset="UTF-8"');
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    }
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(200);
  });
});

describe('a viewer', () => {
  test('may read but gets 403 problems for create, update and delete', async () => {
    for (const route of routes()) {
      const response = await api(route.method, route.path, { as: 'viewer', ...('json' in route ? { json: route.json } : {}) });
      expect(response.status).toBe(route.editorOnly ? 403 : 200);
      if (route.editorOnly) expect(response.body).toMatchObject({ status: 403, title: 'Forbidden' });
    }
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(200);
  });
});

describe('an editor', () => {
  test('may call all five special-event operations', async () => {
    const statuses = [];
    for (const route of routes()) {
      statuses.push((await api(route.method, route.path, 'json' in route ? { json: route.json } : {})).status);
    }
    expect(statuses).toEqual([201, 200, 200, 200, 204]);
  });
});

describe('the cached authorizer result', () => {
  test("covers every route of the user's role, whichever route was called first", async () => {
    // Fresh users, so that nothing is cached for their credentials yet.
    const users = new UsersStore(createDocumentClient(localClient(testEnvironment().dynamodbEndpoint)), testEnvironment().tableName);
    const suffix = Date.now().toString(36);
    const editor = { username: `editor-${suffix}`, password: 'fresh-editor-password' };
    const viewer = { username: `viewer-${suffix}`, password: 'fresh-viewer-password' };
    await users.putUser({ username: editor.username, role: 'editor', passwordHash: await testCredentialHash(editor.password) }, 'create');
    await users.putUser({ username: viewer.username, role: 'viewer', passwordHash: await testCredentialHash(viewer.password) }, 'create');
    const target = await createEvent();
    const readable = await createEvent();

    // First call a read route, then a write route with the same (now cached) credentials.
    expect((await api('GET', '/special-events', { as: editor })).status).toBe(200);
    expect((await api('DELETE', `/special-events/${target.eventId}`, { as: editor })).status).toBe(204);
    expect((await api('GET', '/special-events', { as: viewer })).status).toBe(200);
    expect((await api('POST', '/special-events', { as: viewer, json: sampleEvent() })).status).toBe(403);
    expect((await api('GET', `/special-events/${readable.eventId}`, { as: viewer })).status).toBe(200);
  });

  test('credentials are checked by value, not by the first request: a header for another user is not reused', async () => {
    const response = await refused('GET', '/special-events', {
      as: { header: basicAuthorization(TEST_USERS.editor.username, 'wrong-password!') },
    });
    expect(response.status).toBe(401);
  });
});
