// Date windows and whole-window listings for the tests that follow an event through the list.
import type { SpecialEventBody } from './api-client.ts';

export interface DateWindow {
  startDate: string;
  endDate: string;
}

/** The twelve calendar months of `year`, as list windows. */
export function monthWindows(year: number): DateWindow[] {
  return Array.from({ length: 12 }, (_, month) => ({
    startDate: new Date(Date.UTC(year, month, 1)).toISOString().slice(0, 10),
    endDate: new Date(Date.UTC(year, month + 1, 0)).toISOString().slice(0, 10),
  }));
}

type ListRequest = (method: 'GET', path: string) => Promise<{ status: number; body: unknown }>;

/** Every event `request` lists in a window, all pages (30 a page). */
export async function listedIn(request: ListRequest, window: DateWindow): Promise<SpecialEventBody[]> {
  const events: SpecialEventBody[] = [];
  for (let page = 1; ; page++) {
    const response = await request('GET', `/special-events?startDate=${window.startDate}&endDate=${window.endDate}&page=${page}&limit=30`);
    expect(response.status).toBe(200);
    const body = response.body as SpecialEventBody[];
    events.push(...body);
    if (body.length < 30) return events;
  }
}
