// The MOCK integrations the stack deploys beside the routes, answered by the local gateway without
// credentials or Lambda: the public documents (the service index, the OpenAPI document, the docs
// page: GET, HEAD with ETag and 304, OPTIONS, 405 for anything else), OPTIONS and 405 on a route's
// resource for a method it lacks, and, with CORS on, `/v1.1/{proxy+}` for every other path. The
// answers are lib/openapi/mock-answers.ts's definitions, executed by gateway-http-semantics.ts.
import {
  DOCUMENT_METHODS,
  documentAnswer,
  methodNotAllowedAnswer,
  optionsAnswer,
  unknownPathAnswers,
  type MockAnswer,
} from '../openapi/mock-answers.ts';
import { localDocuments, PUBLIC_DOCUMENT_PATHS } from '../openapi/public-documents.ts';
import { mockAnswer, type Answer } from './gateway-http-semantics.ts';
import { GatewayError } from './gateway-failures.ts';
import type { TemplateRequest } from './mapping-template.ts';

/** The request as API Gateway routes it, as far as a MOCK integration reads it. */
export interface MockRequest {
  method: string;
  /** The resource path below the base path ('' for the base path itself). */
  resourcePath: string;
  /** What the mapping templates see of the request. */
  template: TemplateRequest;
}

export class MockIntegrations {
  /** With CORS on, the API has the `/{proxy+}` mocks: unknown paths have methods (and throttles) of their own. */
  readonly answersUnknownPaths: boolean;
  private readonly corsOrigins: string[];
  private readonly unknownPath: ReturnType<typeof unknownPathAnswers>;
  private readonly localDocument = localDocuments();
  /** Each document's answer, made on first request. */
  private readonly documentAnswers = new Map<string, MockAnswer>();

  constructor(corsOrigins: string[]) {
    this.corsOrigins = corsOrigins;
    this.unknownPath = unknownPathAnswers(corsOrigins);
    this.answersUnknownPaths = Boolean(this.unknownPath);
  }

  isPublicDocument(resourcePath: string): boolean {
    return (PUBLIC_DOCUMENT_PATHS as readonly string[]).includes(resourcePath);
  }

  /** A public document's answer: GET and HEAD with ETag and 304, OPTIONS, 405 for any other method. */
  async documentAnswer({ method, resourcePath, template }: MockRequest): Promise<Answer> {
    if (method === 'OPTIONS') return mockAnswer(optionsAnswer(DOCUMENT_METHODS, this.corsOrigins), template);
    if (method !== 'GET' && method !== 'HEAD') return mockAnswer(methodNotAllowedAnswer(DOCUMENT_METHODS, this.corsOrigins), template);
    let answer = this.documentAnswers.get(resourcePath);
    if (!answer) {
      const document = await this.localDocument(resourcePath);
      if (!document) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
      answer = documentAnswer(document, this.corsOrigins);
      this.documentAnswers.set(resourcePath, answer);
    }
    return mockAnswer(answer, template);
  }

  /**
   * The answer to a request no route takes: OPTIONS or 405 on a resource with other methods
   * (`allowedMethods`), else the unknown-path mocks with CORS on; without them, API Gateway's
   * MISSING_AUTHENTICATION_TOKEN.
   */
  unroutedAnswer({ method, resourcePath, template }: MockRequest, allowedMethods: readonly string[]): Answer {
    if (allowedMethods.length > 0) {
      const answer =
        method === 'OPTIONS' ? optionsAnswer(allowedMethods, this.corsOrigins) : methodNotAllowedAnswer(allowedMethods, this.corsOrigins);
      return mockAnswer(answer, template);
    }
    // With CORS on, `/v1.1/{proxy+}` answers every other path below the base path.
    if (this.unknownPath && resourcePath !== '')
      return mockAnswer(method === 'OPTIONS' ? this.unknownPath.OPTIONS : this.unknownPath.ANY, template);
    throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
  }
}
