// The event's fields are declared once (functions/events/event-fields.ts): the schemas, the
// store's projection and item mapping follow that list.
import { describe, expect, test } from '@jest/globals';
import { EVENT_FIELDS } from '../../functions/events/event-fields.ts';
import { CreateEventRequest, SpecialEvent, UpdateEventRequest } from '../../functions/events/event-schema.ts';
import { BASE_ATTRIBUTES, toStoredEvent } from '../../functions/store/event-items.ts';

const event = {
  eventId: '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d',
  name: 'Gala',
  location: 'Hall',
  eventDescription: 'Line one\nLine two',
  dates: ['2031-02-01'],
  price: 0.5,
};

describe('the event fields', () => {
  test('the schemas give exactly EVENT_FIELDS, in their order', () => {
    expect(Object.keys(CreateEventRequest.entries)).toEqual(EVENT_FIELDS);
    expect(Object.keys(UpdateEventRequest.entries)).toEqual(EVENT_FIELDS);
    expect(Object.keys(SpecialEvent.entries)).toEqual(['eventId', ...EVENT_FIELDS]);
  });

  test('a list reads the id, every field, the version and the commit time', () => {
    expect(BASE_ATTRIBUTES).toEqual(['eventId', 'name', 'location', 'eventDescription', 'dates', 'price', 'version', 'updatedAt']);
  });

  test('a stored item reads back as the event it holds, its dates not shared with the item', () => {
    const item = {
      pk: `EVENT#${event.eventId}`,
      sk: 'EVENT',
      ...event,
      version: 3,
      lastWriteId: 'w',
      updatedAt: '2031-01-01T00:00:00.000Z',
    };
    const stored = toStoredEvent(item);
    expect(stored).toEqual({ event, version: 3 });
    expect(Object.keys(stored.event)).toEqual(['eventId', ...EVENT_FIELDS]);
    expect(stored.event.dates).not.toBe(item.dates);
  });
});
