// The one header lookup (functions/http/header-lookup.ts): names match whatever their case, and the
// local gateway's per-line readers (the identity source, the method override, the content codings)
// read every line through it, in order.
import { headerKey, headerLines, headerValue } from '../../functions/http/header-lookup.ts';
import { identitySource, methodOverride } from '../../lib/local/proxy-event.ts';
import { contentCodings } from '../../lib/local/request-body.ts';

test('a field is found whatever the case of its name', () => {
  const headers = { 'Content-Type': 'application/json', accept: 'text/calendar' };
  expect(headerKey(headers, 'content-type')).toBe('Content-Type');
  expect(headerValue(headers, 'ACCEPT')).toBe('text/calendar');
  expect(headerKey(headers, 'authorization')).toBeUndefined();
  expect(headerValue(undefined, 'accept')).toBeUndefined();
});

test('every line of a field, in order, whatever the case of its name', () => {
  const raw = ['Host', 'a', 'content-encoding', 'gzip', 'X-Other', 'b', 'Content-Encoding', 'identity, deflate'];
  expect(headerLines(raw, 'Content-Encoding')).toEqual(['gzip', 'identity, deflate']);
  expect(headerLines(raw, 'authorization')).toEqual([]);
});

test('the local gateway reads the last identity line, the last method override and every coding but identity', () => {
  const rawHeaders = ['authorization', 'Basic one', 'X-HTTP-Method-Override', ' PUT ', 'AUTHORIZATION', 'Basic two'];
  expect(identitySource({ rawHeaders })).toBe('Basic two');
  expect(methodOverride(rawHeaders)).toBe('PUT');
  expect(methodOverride(['x-http-method-override', '  '])).toBeUndefined();
  expect(contentCodings({ rawHeaders: ['Content-Encoding', 'gzip, identity', 'content-encoding', ' DEFLATE ,'] })).toEqual([
    'gzip',
    'deflate',
  ]);
});
