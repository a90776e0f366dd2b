import type { FastifyRequest } from 'fastify';
import { AppError } from './app-error.js';

/** Media types of request bodies; merge-patch only for PATCH. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'];

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_JSON_DEPTH = 32;

/** Keys that could reach an object's prototype if the body were merged naively. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function malformed(detail: string): AppError {
  return new AppError('malformed-json', detail);
}

/**
 * Nesting depth of a JSON text, counted without parsing so that a hostile body cannot exhaust
 * the stack. Brackets inside strings do not count.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Parses a request body strictly: UTF-8 only (no replacement characters), at most
 * `MAX_JSON_DEPTH` levels, no prototype-reaching keys. An empty body parses to `undefined`, so
 * that GET and DELETE requests sent with `Content-Type: application/json` (as Todo-Backend
 * clients do) are accepted.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw malformed('The body is not valid UTF-8.');
  }
  if (text.trim() === '') return undefined;
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw malformed(`The body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) throw new ForbiddenKeyError(key);
      return value;
    });
  } catch (error) {
    if (error instanceof ForbiddenKeyError) {
      throw malformed(`The key "${error.key}" is not allowed anywhere in a body.`);
    }
    throw malformed(`The body is not valid JSON: ${(error as Error).message}`);
  }
}

class ForbiddenKeyError extends Error {
  constructor(readonly key: string) {
    super(key);
  }
}

/** Reads the `charset` parameter of a Content-Type; only UTF-8 bodies are accepted. */
function assertUtf8Charset(contentType: string | undefined): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw new AppError('unsupported-media-type', `Only UTF-8 bodies are accepted, not ${charset}.`);
  }
}

/** Fastify content-type parser for `JSON_MEDIA_TYPES`, replacing Fastify's lenient default. */
export function parseJsonRequest(
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, body?: unknown) => void,
): void {
  try {
    const contentType = request.headers['content-type'];
    assertUtf8Charset(contentType);
    if (contentType?.includes('merge-patch') && request.method !== 'PATCH') {
      throw new AppError(
        'unsupported-media-type',
        'application/merge-patch+json is only for PATCH; send application/json.',
      );
    }
    done(null, parseJsonBody(typeof body === 'string' ? Buffer.from(body) : body));
  } catch (error) {
    done(error as Error);
  }
}
