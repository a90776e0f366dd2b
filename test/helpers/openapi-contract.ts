import type { FastifyInstance } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface MediaObject {
  schema?: object;
}
interface ResponseObject {
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  responses?: Record<string, ResponseObject>;
}
/** The parts of a request and response the check reads: fits `inject` and `fetch` alike. */
export interface ExchangeRequest {
  readonly method?: string;
  readonly url?: string;
}
export interface ExchangeResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
}

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * The OpenAPI path template (`/api/todos/{id}`) a concrete path belongs to. Like the router, a
 * template without parameters wins (`/api/todos/changes` is not a todo id).
 */
export function findPathTemplate(document: OpenApiDocument, path: string): string | undefined {
  const matching = Object.keys(document.paths).filter((template) => {
    const pattern = template.replace(/\{[^}]+\}/g, '[^/]+');
    return new RegExp(`^${pattern}/?$`).test(path);
  });
  const parameters = (template: string) => (template.match(/\{/g) ?? []).length;
  return matching.sort((a, b) => parameters(a) - parameters(b))[0];
}

/**
 * Throws unless the response's status is documented for its operation and its body validates
 * against the documented schema for that status and media type. Paths outside the document
 * (unknown routes, the docs page) must still answer with a problem document when they fail.
 */
export function assertMatchesOpenApi(
  document: OpenApiDocument,
  request: ExchangeRequest,
  response: ExchangeResponse,
): void {
  const url = request.url ?? '/';
  const path = new URL(url, 'http://x').pathname;
  const method = (request.method ?? 'GET').toLowerCase();
  const rawContentType = response.headers['content-type'];
  const contentType =
    (typeof rawContentType === 'string' ? rawContentType : '').split(';')[0] ?? '';
  const template = findPathTemplate(document, path);
  const operation = template ? document.paths[template]?.[method] : undefined;

  if (!operation) {
    // Unknown routes, 405s, preflights and the docs UI: any error must still be a problem.
    if (response.statusCode >= 400 && contentType !== 'application/problem+json') {
      throw new Error(`${method} ${path} → ${response.statusCode} is not a problem document`);
    }
    return;
  }
  const documented = operation.responses?.[String(response.statusCode)];
  if (!documented) {
    throw new Error(
      `${method.toUpperCase()} ${template} answered ${response.statusCode}, which its OpenAPI operation does not document`,
    );
  }
  const schema = documented.content?.[contentType]?.schema;
  if (!documented.content || response.statusCode === 204 || response.statusCode === 304) {
    if (response.body !== '')
      throw new Error(`${method} ${path} → ${response.statusCode} has a body`);
    return;
  }
  if (!schema) {
    throw new Error(
      `${method.toUpperCase()} ${template} → ${response.statusCode} answered ${contentType}, which is not documented`,
    );
  }
  if (contentType === 'text/html') return;
  const validate = validatorFor(schema);
  const body: unknown = JSON.parse(response.body);
  if (!validate(body)) {
    throw new Error(
      `${method.toUpperCase()} ${template} → ${response.statusCode} does not match its schema: ${ajv.errorsText(validate.errors)}`,
    );
  }
}

/** The document an app serves at /api/openapi.json, typed for the checks above. */
export function openApiDocumentOf(app: FastifyInstance): OpenApiDocument {
  return app.swagger() as unknown as OpenApiDocument;
}
