// A JSON number judged by its decimal text, not by the double JSON.parse makes of it: `1e-400`
// parses to 0 and `10.000000000000000001` to 10, yet neither has at most 2 decimals. Exact
// arithmetic on the digits, so no number is rounded before it is judged.

/** A decimal `digits × 10^exponent`: digits without leading or trailing zeros ('' for zero). */
interface Decimal {
  negative: boolean;
  digits: string;
  exponent: number;
}

// JSON's number grammar (RFC 8259 §6), and the forms String(number) writes (`1e+21`, `5e-324`).
const NUMBER_TEXT = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** The decimal a number's text names, or undefined for text that is not a finite decimal (`Infinity`). */
function decimalOf(text: string): Decimal | undefined {
  const match = NUMBER_TEXT.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  // A 64 KiB body can hold an exponent of thousands of digits: Number() makes it ±Infinity, which
  // still compares and counts right (the number is then beyond every bound, or has endless decimals).
  let exponent = Number(exponentText) - fraction.length;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  return digits === '' ? { negative: false, digits: '', exponent: 0 } : { negative: sign === '-', digits, exponent };
}

/** Whether two number texts name the same decimal (`1e2` and `100.0` do; `1e-400` and `0` do not). */
export function sameDecimal(a: string, b: string): boolean {
  const x = decimalOf(a);
  const y = decimalOf(b);
  return x !== undefined && x.negative === y?.negative && x.digits === y.digits && x.exponent === y.exponent;
}

/** Digits after the decimal point once the text is written out in full (`1.50` has 1, `1e-400` has 400, `1e3` none). */
export function decimalPlaces(text: string): number {
  const decimal = decimalOf(text);
  return decimal === undefined ? Infinity : Math.max(0, -decimal.exponent);
}

/** -1, 0 or 1 as the decimal of `text` is below, equal to or above `bound` (a finite double); NaN for text that is not a decimal. */
export function compareDecimal(text: string, bound: number): number {
  const a = decimalOf(text);
  const b = decimalOf(String(bound));
  if (a === undefined || b === undefined) return NaN;
  const sign = (d: Decimal) => (d.digits === '' ? 0 : d.negative ? -1 : 1);
  if (sign(a) !== sign(b)) return Math.sign(sign(a) - sign(b));
  if (sign(a) === 0) return 0;
  // Same sign: compare magnitudes by the place of the leading digit, then digit by digit.
  const magnitude = (d: Decimal) => d.digits.length + d.exponent;
  let order = Math.sign(magnitude(a) - magnitude(b));
  if (order === 0) {
    const width = Math.max(a.digits.length, b.digits.length);
    const [x, y] = [a.digits.padEnd(width, '0'), b.digits.padEnd(width, '0')];
    order = x === y ? 0 : x < y ? -1 : 1;
  }
  return a.negative ? -order : order;
}

/**
 * A JSON number of a request body that no double represents exactly (`1e-400`, `1e400`,
 * `10.000000000000000001`), kept as its text in place of the rounded double, so that a schema
 * judges what was sent. No field accepts one: every valid value is a number that a double holds exactly.
 */
export class JsonNumberText {
  readonly source: string;
  /** What JSON.parse made of it. */
  readonly rounded: number;
  constructor(source: string, rounded: number) {
    this.source = source;
    this.rounded = rounded;
  }
}
