// The operations measured warm: for each, the API Gateway event its handler gets and the same
// DynamoDB requests sent raw (bench/baseline/raw-operations.ts), with the events they need.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { proxyEvent } from '../support/api-events.ts';
import { eventBody, sampleEvent } from '../support/bench-tables.ts';
import type { Window } from '../list-scaling/dataset.ts';

export type RawOperations = typeof import('../baseline/raw-operations.ts');

export interface WarmOperation {
  name: string;
  /** The function bundle that serves it. */
  handler: string;
  expectedStatus: number;
  event(): APIGatewayProxyEvent;
  raw(): Promise<unknown>;
}

export interface WarmFixtures {
  /** Events to load before measuring. */
  events: SpecialEvent[];
  operations: WarmOperation[];
}

export const newEventBody = () => eventBody('Warm bench', 2031);

/** `calls` is how many times each operation will run, warm-up included (deletes need that many events). */
export function warmOperations(
  raw: RawOperations,
  tables: { events: string; idempotency: string },
  window: Window,
  calls: number,
): WarmFixtures {
  const readSubject = sampleEvent(['2031-01-10', '2031-01-11'], 'Warm read subject');
  const updateSubjects = [sampleEvent(['2031-01-12'], 'Warm update subject'), sampleEvent(['2031-01-12'], 'Warm raw update subject')];
  // Moved back and forth between two days: every call removes one index item and writes another.
  const datesSubjects = [sampleEvent(['2031-01-14'], 'Warm dates subject'), sampleEvent(['2031-01-14'], 'Warm raw dates subject')];
  const moves = [0, 0];
  const nextDates = (subject: 0 | 1) => [(moves[subject] = (moves[subject] ?? 0) + 1) % 2 === 1 ? '2031-01-15' : '2031-01-14'];
  const handlerDeletes = Array.from({ length: calls }, () => sampleEvent(['2031-02-01', '2031-02-08']));
  const rawDeletes = Array.from({ length: calls }, () => sampleEvent(['2031-02-01', '2031-02-08']));
  let price = 0;
  let handlerDeleted = 0;
  let rawDeleted = 0;
  const body = () => {
    const fields = newEventBody();
    return { ...fields, event: { eventId: randomUUID(), ...fields } };
  };

  const operations: WarmOperation[] = [
    {
      name: 'get',
      handler: 'get-special-event',
      expectedStatus: 200,
      event: () => proxyEvent('getSpecialEvent', { eventId: readSubject.eventId }),
      raw: () => raw.getEvent(tables.events, readSubject.eventId),
    },
    {
      name: 'list (default page)',
      handler: 'list-special-events',
      expectedStatus: 200,
      event: () => proxyEvent('listSpecialEvents'),
      raw: () => raw.listPage(tables.events, window.startDate, window.endDate, 10),
    },
    {
      name: 'create',
      handler: 'create-special-event',
      expectedStatus: 201,
      event: () => proxyEvent('createSpecialEvent', { body: newEventBody() }),
      raw: () => raw.createEvent(tables.events, body().event),
    },
    {
      name: 'create (Idempotency-Key)',
      handler: 'create-special-event',
      expectedStatus: 201,
      event: () => proxyEvent('createSpecialEvent', { body: newEventBody(), headers: { 'Idempotency-Key': randomUUID() } }),
      raw: () => raw.createEventIdempotently(tables.events, tables.idempotency, body().event, randomUUID()),
    },
    {
      name: 'update (price)',
      handler: 'update-special-event',
      expectedStatus: 200,
      event: () => proxyEvent('updateSpecialEvent', { eventId: updateSubjects[0]!.eventId, body: { price: (price += 1) % 1000 } }),
      raw: () => raw.updatePrice(tables.events, updateSubjects[1]!.eventId, (price += 1) % 1000),
    },
    {
      name: 'update (dates)',
      handler: 'update-special-event',
      expectedStatus: 200,
      event: () => proxyEvent('updateSpecialEvent', { eventId: datesSubjects[0]!.eventId, body: { dates: nextDates(0) } }),
      raw: () => raw.updateDates(tables.events, datesSubjects[1]!.eventId, nextDates(1)),
    },
    {
      name: 'delete',
      handler: 'delete-special-event',
      expectedStatus: 204,
      event: () => proxyEvent('deleteSpecialEvent', { eventId: handlerDeletes[handlerDeleted++]!.eventId }),
      raw: () => raw.deleteEvent(tables.events, rawDeletes[rawDeleted++]!.eventId),
    },
  ];
  return { events: [readSubject, ...updateSubjects, ...datesSubjects, ...handlerDeletes, ...rawDeletes], operations };
}
