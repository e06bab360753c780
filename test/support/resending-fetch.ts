// Before each system-tier test file (jest.system.config.js, setupFiles): the file's fetch() follows
// the documented client's resend rule for safe requests (resendingSafeRequests): a test process on
// a busy machine whose event loop stalls past the local API's keep-alive timeout writes its next
// request on a connection the server has already closed, and gets no answer at all ("other side
// closed"), as any client can; a client then sends the request again. Every request of the file
// goes through it: api() and apiRetrying (test/support/api-client.ts) and the files' own fetch().
import { resendingSafeRequests } from '../../bench/support/resend-rule.ts';

globalThis.fetch = resendingSafeRequests(globalThis.fetch);
