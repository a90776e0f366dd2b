import type { FastifyReply } from 'fastify';

/**
 * Entity tags and conditional requests (RFC 9110 §8.8.3, §13). A todo's strong ETag is its
 * version in quotes, so it changes exactly when the todo does.
 */

/** What an `If-Match` header asks for: any current version, or one of these. */
export type VersionPrecondition = { readonly any: true } | { readonly versions: readonly number[] };

export function etagOf(version: number): string {
  return `"${version}"`;
}

/** Entity tags of a list header (`"1", W/"2"`), weak ones marked. Malformed members are skipped. */
function entityTags(header: string): { weak: boolean; opaque: string }[] {
  const tags: { weak: boolean; opaque: string }[] = [];
  for (const match of header.matchAll(/(W\/)?"([^"]*)"/g)) {
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? '' });
  }
  return tags;
}

/**
 * Parses `If-Match`. Weak tags never match (the strong comparison of §13.1.1), nor do tags that
 * are not one of our versions, so they leave a list that no version satisfies.
 */
export function parseIfMatch(header: string | undefined): VersionPrecondition | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return { any: true };
  const versions = entityTags(header)
    .filter((tag) => !tag.weak && /^[1-9][0-9]{0,15}$/.test(tag.opaque))
    .map((tag) => Number(tag.opaque));
  return { versions };
}

export function satisfies(precondition: VersionPrecondition, version: number): boolean {
  return 'any' in precondition || precondition.versions.includes(version);
}

/** `If-None-Match` uses the weak comparison: `W/"3"` matches `"3"`. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.slice(1, -1);
  return entityTags(header).some((tag) => tag.opaque === opaque);
}

/**
 * Ends a 204 or 304 without a body. No serializer runs, so no `null` payload, `Content-Type` or
 * `Content-Length` is sent (a 304 carries only the validators, RFC 9110 §15.4.5).
 */
export function sendWithoutBody(reply: FastifyReply, statusCode: 204 | 304): FastifyReply {
  return reply.code(statusCode).send();
}
