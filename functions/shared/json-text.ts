// Checks of a request body's text that JSON.parse cannot make: strict UTF-8 decoding and
// duplicate object keys.

let strictUtf8: InstanceType<typeof TextDecoder> | undefined; // built on first use, like every module-level value here that bundles could not drop

/**
 * The body's bytes as text, or undefined when they are not UTF-8 (invalid sequences, overlong
 * forms, encoded surrogates: the fatal decoder refuses each of them). A BOM is kept, so that
 * JSON.parse refuses it as RFC 8259 allows.
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    strictUtf8 ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The dotted path of the first object key that appears twice in the same object, in text that
 * JSON.parse has accepted (so the scan may assume valid JSON); undefined when there is none.
 * Hand-written: JSON.parse keeps the last value silently, and a full second parser (a registry
 * package) would double the body parsing for this one check. Keys compare after unescaping, so
 * `"a"` and `"\u0061"` are the same key.
 */
export function duplicateKeyPath(text: string): string | undefined {
  interface Frame {
    keys?: Set<string>; // an object's keys so far; undefined for an array
    key: string; // the current key, or the current index of an array
    index: number;
  }
  const stack: Frame[] = [];
  let expectingKey = false;
  const path = () => stack.map((frame) => frame.key).join('.');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (expectingKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        top.key = key;
        if (top.keys.has(key)) return path();
        top.keys.add(key);
        expectingKey = false;
      }
      i = end;
    } else if (c === '{') {
      stack.push({ keys: new Set(), key: '', index: 0 });
      expectingKey = true;
    } else if (c === '[') {
      stack.push({ key: '0', index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.keys) expectingKey = true;
      else if (top) top.key = String(++top.index);
    }
  }
  return undefined;
}
