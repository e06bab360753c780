// Replaces @smithy/core/event-streams in Lambda bundles (see scripts/build.ts).
// The SDK's HTTP protocol loads that module with a dynamic import() only for operations that
// stream events. DynamoDB has no such operation, but esbuild cannot tree-shake a dynamically
// imported module and bundled all of it (about 15 KB minified) into every function.
function notBundled(): never {
  throw new Error('Event streams are not bundled into these functions: DynamoDB has no event-stream operations');
}

// A class, because the SDK constructs it with `new`.
// eslint-disable-next-line @typescript-eslint/no-extraneous-class
export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}

export function eventStreamSerdeProvider(): never {
  notBundled();
}
