import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, NOT_FOUND_DETAIL, notFound } from './app-error.js';
import { PROBLEM_MEDIA_TYPE, problemDocument } from './problem.js';
import { databaseTroubleOf } from '../db/database-errors.js';
import { PROBLEM_CODES, type ProblemCode } from './problem-codes.js';
import { toFieldErrors } from './validation.js';

/** Fastify's own error codes and the problem each one becomes. */
const FRAMEWORK_ERRORS: Readonly<Record<string, { code: ProblemCode; detail: string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'payload-too-large',
    detail: 'The request body exceeds the size limit.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported-media-type',
    detail: 'Request bodies must be application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'malformed-request',
    detail: 'Content-Length does not match the body.',
  },
  FST_ERR_BAD_URL: { code: 'malformed-request', detail: 'The URL has an invalid percent-escape.' },
  // Every path parameter is an id; one too long to be an id names nothing.
  FST_ERR_MAX_PARAM_LENGTH: { code: 'not-found', detail: NOT_FOUND_DETAIL },
};

/** Which request part failed schema validation decides the problem. */
function validationProblem(error: FastifyError): AppError {
  const fieldErrors = toFieldErrors(error.validation ?? []);
  switch (error.validationContext) {
    case 'body': {
      const unknown = fieldErrors.filter(
        (field) => field.code === 'additionalProperties' && field.pointer.split('/').length === 2,
      );
      if (unknown.length > 0) {
        const names = unknown.map((field) => field.pointer.slice(1)).join(', ');
        return new AppError('unknown-field', `Unknown field(s): ${names}.`, {
          errors: unknown.map((field) => ({ ...field, code: 'unknown-field' })),
        });
      }
      const first = fieldErrors[0];
      const detail =
        fieldErrors.length === 1 && first
          ? `${first.pointer || 'The body'} ${first.detail}.`
          : `The body has ${fieldErrors.length} invalid fields; see errors[].`;
      return new AppError('validation-error', detail, { errors: fieldErrors });
    }
    case 'querystring': {
      // Query pointers name the parameter, without the JSON Pointer slash.
      const parameters = fieldErrors.map((field) => ({
        ...field,
        pointer: field.pointer.slice(1),
      }));
      const unknown = parameters.filter((field) => field.code === 'additionalProperties');
      if (unknown.length > 0) {
        return new AppError(
          'unknown-parameter',
          `Unknown query parameter(s): ${unknown.map((field) => field.pointer).join(', ')}.`,
          { errors: unknown.map((field) => ({ ...field, code: 'unknown-parameter' })) },
        );
      }
      return new AppError(
        'invalid-parameter',
        parameters.map((field) => `${field.pointer} ${field.detail}`).join('; ') + '.',
        { errors: parameters },
      );
    }
    case 'params':
      return notFound();
    default: {
      const headers = fieldErrors.map((field) => ({ ...field, pointer: field.pointer.slice(1) }));
      return new AppError(
        'invalid-parameter',
        headers.map((field) => `Header ${field.pointer} ${field.detail}`).join('; ') + '.',
        { errors: headers },
      );
    }
  }
}

/** Maps anything thrown while handling a request to the problem the client will see. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationProblem(fastifyError);
  const known = FRAMEWORK_ERRORS[fastifyError.code];
  if (known) return new AppError(known.code, known.detail);
  if (fastifyError.statusCode === 413) {
    return new AppError('payload-too-large', 'The request body exceeds the size limit.');
  }
  const trouble = databaseTroubleOf(error);
  if (trouble === 'storage-full') {
    return new AppError('insufficient-storage', 'The service is out of storage; retry later.', {
      headers: { 'retry-after': '30' },
    });
  }
  if (fastifyError.statusCode === 503 || trouble === 'unavailable') {
    return new AppError(
      'unavailable',
      'The service is busy or its database unreachable; retry shortly.',
      {
        headers: { 'retry-after': '1' },
      },
    );
  }
  return new AppError('internal', 'The server failed to handle this request.');
}

/** Sends `error` as an RFC 9457 problem document. Nothing of a 5xx's cause reaches the client. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): void {
  const document = problemDocument({
    code: error.code,
    detail: error.detail,
    instance: request.url.split('?')[0] ?? '/',
    requestId: request.id,
    errors: error.options.errors,
    extensions: error.options.extensions,
  });
  void reply
    .code(error.status)
    // Set here too: framework errors (bad URL, over-long param) are answered before onRequest.
    .headers({ ...error.options.headers, 'cache-control': 'no-store', 'x-request-id': request.id })
    .type(PROBLEM_MEDIA_TYPE)
    .send(JSON.stringify(document));
}

/** The one error handler: logs what the client may not see, answers with a problem. */
export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  sendProblem(request, reply, appError);
}

/** Errors Node's HTTP parser raises before a request exists, and the problem each becomes. */
const CLIENT_ERRORS: Readonly<Record<string, { code: ProblemCode; detail: string }>> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'request-timeout',
    detail: 'The request was not received in time.',
  },
  HPE_HEADER_OVERFLOW: {
    code: 'headers-too-large',
    detail: 'The request head exceeds the size limit.',
  },
};
const UNPARSEABLE = {
  code: 'malformed-request',
  detail: 'The request could not be parsed as HTTP/1.1.',
} as const;

/**
 * Protocol errors (header overflow, timeouts, malformed framing) get a problem document too,
 * written straight to the socket since no request object exists yet.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { code, detail } = CLIENT_ERRORS[error.code ?? ''] ?? UNPARSEABLE;
  const status = PROBLEM_CODES[code].status;
  const requestId = randomUUID();
  const body = JSON.stringify(problemDocument({ code, detail, instance: '/', requestId }));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        `Content-Type: ${PROBLEM_MEDIA_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
