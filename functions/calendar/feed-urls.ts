// Absolute URLs for calendar apps (a subscription address and each event's URL property cannot be
// relative): the scheme API Gateway reports (X-Forwarded-Proto), the Host the client used (the
// execute-api host or the custom domain), and the base path the request came through (the stage
// and `/v1.1`, taken from requestContext.path as the handlers' Location headers are).
import { headerValue } from '../http/header-lookup.ts';
import type { HttpEvent } from '../http/http.ts';

/** The API's base URL (ending in `/v1.1`) as the client reached `routePath` (e.g. `/calendar-feeds`). */
export function apiBaseUrl(event: HttpEvent, routePath: string): string {
  const scheme = headerValue(event.headers, 'x-forwarded-proto') === 'http' ? 'http' : 'https';
  const host = headerValue(event.headers, 'host') ?? 'localhost';
  const path = event.requestContext.path.replace(/\/$/, '');
  const base = path.endsWith(routePath) ? path.slice(0, path.length - routePath.length) : path;
  return `${scheme}://${host}${base}`;
}

/** The address a calendar app subscribes to. */
export function subscribeUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/calendar.ics?token=${token}`;
}

export function eventUrl(baseUrl: string, eventId: string): string {
  return `${baseUrl}/special-events/${eventId}`;
}
