// The names of a special event's fields besides its id, in their order: the one list the store's
// projection and item mapping (functions/store/event-items.ts), its unchanged-write check
// (events-store.ts) and the bench baseline are built from. The schemas (event-schema.ts) must give exactly these fields, which the
// compiler checks. A module of its own, free of valibot: the store, which every function bundles,
// including the authorizer, reads the list without loading the schemas.

export const EVENT_FIELDS = ['name', 'location', 'eventDescription', 'dates', 'price'] as const;

export type EventField = (typeof EVENT_FIELDS)[number];
