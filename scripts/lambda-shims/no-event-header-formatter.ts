// Replaces @smithy/signature-v4's HeaderFormatter in Lambda bundles (see scripts/build.ts). The
// signer builds one, but only signMessage uses it, to sign the messages of an event stream;
// DynamoDB has no event-stream operations (no-event-streams.ts), so its 2.3 KB never run.
export class HeaderFormatter {
  format(): never {
    throw new Error('Event-stream message signing is not bundled: DynamoDB has no event-stream operations');
  }
}
