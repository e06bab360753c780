// The kiosk's figures as a target and a table (bench/report.ts puts them with the others).
import type { KioskResult } from './measure.ts';

/** A revalidating kiosk must move at most this share of the bytes of one that downloads every time. */
export const KIOSK_BYTES_RATIO = 0.5;

export function kioskVerdicts(kiosk: KioskResult) {
  return kiosk.polls.map((polling) => {
    const share = polling.bytesRevalidating / polling.bytesFull;
    return {
      target: `Kiosk bytes per hour, revalidating / downloading: ${polling.name}`,
      measured: `${share.toFixed(2)}x (${kb(polling.bytesRevalidating)} / ${kb(polling.bytesFull)})`,
      limit: `<= ${KIOSK_BYTES_RATIO.toFixed(2)}x`,
      pass: share <= KIOSK_BYTES_RATIO,
    };
  });
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

export function kioskSection(kiosk: KioskResult, table: (header: string[], rows: (string | number)[][]) => string): string {
  return (
    '### A kiosk polling once a minute for an hour (local HTTP server; bytes = status line + headers + content)\n\n' +
    table(
      ['Polled', 'Polls', 'Bytes, downloading', 'Bytes, revalidating', '304s', 'Saved per hour', 'Read capacity per hour (both ways)'],
      kiosk.polls.map((p) => [
        p.name,
        p.polls,
        kb(p.bytesFull),
        kb(p.bytesRevalidating),
        p.notModified,
        kb(p.bytesFull - p.bytesRevalidating),
        `${p.readCapacity} RCU`,
      ]),
    ) +
    "\n\nA 304 saves the transfer, not the reads: the list's tag is a hash of the page it would send, an event's its version.\n\n" +
    table(
      ['Page (limit 1)', 'Read capacity'],
      kiosk.pageDepth.map((d) => [d.page, `${d.readCapacity} RCU`]),
    )
  );
}
