// What the mock deployment answers: for each operation of the route table, its real success
// status and a realistic example body (a test checks each against the response schema).
import type { SpecialEvent } from '../../functions/events/event-schema.ts';

export const EXAMPLE_EVENTS: SpecialEvent[] = [
  {
    eventId: '3be6453c-03eb-4357-ae5a-984a0e574a54',
    name: 'Mummies After Dark',
    location: 'Egyptian Gallery, Level 2',
    eventDescription: 'A torch-lit evening tour of the mummy collection with the curator of ancient Egypt, followed by a Q&A.',
    dates: ['2030-10-29', '2030-10-30', '2030-10-31'],
    price: 25,
  },
  {
    eventId: 'dad4bce8-f5cb-4078-a211-995864315e39',
    name: 'Dinosaur Sleepover',
    location: 'Hall of Fossils',
    eventDescription: 'Families spend the night beneath the Tyrannosaurus skeleton: flashlight trail, fossil workshop and breakfast.',
    dates: ['2030-11-02'],
    price: 89.5,
  },
];

const [example] = EXAMPLE_EVENTS as [SpecialEvent];

export interface MockOperation {
  status: 200 | 201 | 204;
  /** Undefined for 204: no body at all. */
  body: unknown;
  headers: Record<string, string>;
}

/** By operationId. */
export const MOCK_OPERATIONS: Record<string, MockOperation> = {
  // Location is relative: against /<stage>/special-events it resolves to /<stage>/special-events/<id>.
  createSpecialEvent: { status: 201, body: example, headers: { Location: `special-events/${example.eventId}`, ETag: '"1"' } },
  listSpecialEvents: { status: 200, body: EXAMPLE_EVENTS, headers: {} },
  getSpecialEvent: { status: 200, body: example, headers: { ETag: '"1"' } },
  updateSpecialEvent: { status: 200, body: { ...example, price: 30 }, headers: { ETag: '"2"' } },
  deleteSpecialEvent: { status: 204, body: undefined, headers: {} },
};
