// `npm run openapi`: writes openapi/openapi.json from the code (lib/openapi/openapi-document.ts).
// A contract test fails while the committed file differs from a fresh generation.
import { writeFile } from 'node:fs/promises';
import { buildOpenApiDocument, serializeOpenApiDocument } from '../lib/openapi/openapi-document.ts';

export const OPENAPI_FILE = 'openapi/openapi.json';

await writeFile(OPENAPI_FILE, serializeOpenApiDocument(buildOpenApiDocument()));
console.log(`Wrote ${OPENAPI_FILE}`);
