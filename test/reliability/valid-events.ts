// fast-check arbitraries for VALID requests, and what the API must make of them (trimmed text,
// dates sorted without duplicates). Names favour a small pool with shared prefixes, case and
// script differences, so that list-order ties and UTF-8 vs UTF-16 ordering both get exercised.
import fc from 'fast-check';
import { LIMITS } from '../../functions/events/limits.ts';
import { codePointLength, MULTI_LINE_TEXT, obeysTextRule, SINGLE_LINE_TEXT, type TextRule } from '../../functions/events/text-rules.ts';
import type { SpecialEventBody } from '../support/api-client.ts';
import { dayOfYear } from './reserved-years.ts';

export type EventInput = Omit<SpecialEventBody, 'eventId'>;

function text(maxLength: number, rule: TextRule, pool: string[]): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom(...pool) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }) },
      fc
        .tuple(fc.constantFrom(...pool), fc.constantFrom(' ', '\u00a0', '\u3000', '  '), fc.string({ unit: 'grapheme', maxLength: 8 }))
        .map(([head, space, tail]) => `${space}${head}${tail}${space}`),
      fc.string({ unit: 'grapheme-ascii', minLength: maxLength, maxLength }),
    )
    .filter((value) => obeysTextRule(rule, value) && codePointLength(value.trim()) <= maxLength);
}

// U+FF01 sorts before U+1F3A8 in UTF-8 (DynamoDB's order) but after it in UTF-16 (JavaScript's).
const NAMES = [
  'Art',
  'Art Deco',
  'art',
  'Ärt',
  'Art\u00a0Deco',
  '！Fullwidth',
  '🎨 Palette',
  '𝄞 Music',
  'Zoo',
  'zoo',
  '中文',
  'e\u0301clair',
  'éclair',
];

export const eventName = text(LIMITS.nameLength, SINGLE_LINE_TEXT, NAMES);
export const eventLocation = text(LIMITS.locationLength, SINGLE_LINE_TEXT, ['Main Hall', 'Hall 2', 'Jardin d’hiver', '東館']);
export const eventDescription = text(LIMITS.descriptionLength, MULTI_LINE_TEXT, [
  'A tour.',
  'Line one\nLine two\twith a tab',
  'Emoji 🦕 and RTL עברית',
]);
/** Whole cents from 0 to the maximum: JSON numbers such as 19.99 that survive DynamoDB's decimals. */
export const eventPrice = fc.integer({ min: 0, max: LIMITS.maxPrice * 100 }).map((cents) => cents / 100);

/** Dates of `year` (duplicates and any order allowed: the API normalises them). */
export function eventDates(year: number, options: { firstDay?: number; lastDay?: number; maxLength?: number } = {}) {
  const { firstDay = 0, lastDay = 364, maxLength = LIMITS.maxDates } = options;
  return fc.array(
    fc.integer({ min: firstDay, max: lastDay }).map((day) => dayOfYear(year, day)),
    { minLength: 1, maxLength },
  );
}

export function eventInput(year: number, dateOptions?: Parameters<typeof eventDates>[1]): fc.Arbitrary<EventInput> {
  return fc.record({
    name: eventName,
    location: eventLocation,
    eventDescription: eventDescription,
    dates: eventDates(year, dateOptions),
    price: eventPrice,
  });
}

/** An event whose dates are day numbers, placed in a year only when the test knows which year it owns. */
export interface EventTemplate extends Omit<EventInput, 'dates'> {
  days: number[];
}

/** `hotDays` come up often, so that several events share a first date and their names decide the order. */
export function eventTemplate(options: {
  firstDay: number;
  lastDay: number;
  maxDates: number;
  hotDays: number[];
}): fc.Arbitrary<EventTemplate> {
  const day = fc.oneof(fc.constantFrom(...options.hotDays), fc.integer({ min: options.firstDay, max: options.lastDay }));
  return fc.record({
    name: eventName,
    location: eventLocation,
    eventDescription: eventDescription,
    days: fc.array(day, { minLength: 1, maxLength: options.maxDates }),
    price: eventPrice,
  });
}

export function inYear({ days, ...fields }: EventTemplate, year: number): EventInput {
  return { ...fields, dates: days.map((day) => dayOfYear(year, day)) };
}

/** A non-empty subset of the fields, with new valid values. */
export function eventChanges(year: number): fc.Arbitrary<Partial<EventInput>> {
  return fc
    .record(
      {
        name: eventName,
        location: eventLocation,
        eventDescription: eventDescription,
        dates: eventDates(year, { maxLength: 8 }),
        price: eventPrice,
      },
      { requiredKeys: [] },
    )
    .filter((changes) => Object.keys(changes).length > 0);
}

/** What the API stores and returns for `input`. */
export function normalised<T extends Partial<EventInput>>(input: T): T {
  const result: Partial<EventInput> = { ...input };
  if (input.name !== undefined) result.name = input.name.trim();
  if (input.location !== undefined) result.location = input.location.trim();
  if (input.eventDescription !== undefined) result.eventDescription = input.eventDescription.trim();
  if (input.dates !== undefined) result.dates = [...new Set(input.dates)].sort();
  return result as T;
}
