// Replaces the pure-JavaScript SHA-256 that @smithy/core's Sha256Node falls back to when
// node:crypto cannot hash (see scripts/build.ts). Node always can, so the fallback (about 3 KB
// minified) never runs in a function; should it ever be reached, it fails loudly.
export class Sha256Js {
  constructor() {
    throw new Error('node:crypto has no SHA-256 here, and the JavaScript fallback is not bundled');
  }
}
