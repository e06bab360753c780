// Ajv as the contract tests use it: JSON Schema 2020-12, formats asserted, and `multipleOf` in
// exact decimal arithmetic, as the specification defines it. Ajv's own multipleOf divides in
// binary floating point: 19.99 / 0.01 = 1998.9999999999998 fails, 0.030000000000000002 / 0.01 = 3
// passes, the opposite of what the JSON numbers say.
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** `x` as an integer and a power of ten: 19.99 -> [1999n, 2]; from the shortest round-trip text, as JSON carries it. */
function decimal(x: number): [bigint, number] {
  const [mantissa = '0', exponent = '0'] = String(Math.abs(x)).toLowerCase().split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exponent);
  const digits = BigInt(`${whole}${fraction}`);
  return scale >= 0 ? [digits, scale] : [digits * 10n ** BigInt(-scale), 0];
}

export function isDecimalMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false;
  const [a, p] = decimal(value);
  const [b, q] = decimal(divisor);
  const scale = Math.max(p, q);
  return (a * 10n ** BigInt(scale - p)) % (b * 10n ** BigInt(scale - q)) === 0n;
}

export function createValidator(options: { strict?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: options.strict ?? true, allErrors: true });
  formats.default(ajv);
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword({
    keyword: 'multipleOf',
    type: 'number',
    schemaType: 'number',
    errors: false,
    validate: (divisor: number, value: number) => isDecimalMultipleOf(value, divisor),
  });
  return ajv;
}
