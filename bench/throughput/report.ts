// The throughput figures as targets and a table (bench/report.ts puts them with the others).
import type { ThroughputResult } from './measure.ts';

const ms = (value: number) => `${value.toFixed(1)} ms`;
const counts = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(', ');
const notOk = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .filter(([status]) => status !== '200')
    .reduce((total, [, count]) => total + count, 0);

export function throughputVerdicts(result: ThroughputResult) {
  return [
    {
      target: `Sustained requests with known credentials (${result.sustained.requestsPerSecond}/s): answers other than 200 (429, 5xx)`,
      measured: String(notOk(result.sustained.statuses)),
      limit: '0',
      pass: notOk(result.sustained.statuses) === 0,
    },
    {
      target: `A known client at 10/s beside ${result.flood.floodPerSecond}/s of wrong credentials: answers other than 200`,
      measured: String(notOk(result.flood.knownClient.statuses)),
      limit: '0',
      pass: notOk(result.flood.knownClient.statuses) === 0,
    },
  ];
}

export function throughputSection(result: ThroughputResult, table: (header: string[], rows: (string | number)[][]) => string): string {
  const { sustained, flood } = result;
  return (
    '### Throughput of the local API with the deployed method throttling (500 requests/s, burst 100 per method)\n\n' +
    table(
      ['Load', 'Requests/s', 'p50', 'p99', 'Answers'],
      [
        [
          `${sustained.clients} closed-loop clients with known credentials, GET of an event and the week's list, ${sustained.seconds} s`,
          sustained.requestsPerSecond,
          ms(sustained.latency.p50),
          ms(sustained.latency.p99),
          counts(sustained.statuses),
        ],
        [
          `A known client, beside ${flood.floodPerSecond}/s of new wrong credentials on the same method, ${flood.seconds} s`,
          10,
          ms(flood.knownClient.latency.p50),
          ms(flood.knownClient.latency.p99),
          counts(flood.knownClient.statuses),
        ],
        ['The flood of wrong credentials (each one a check)', flood.floodPerSecond, '', '', counts(flood.flood)],
      ],
    )
  );
}
