import type { FastifyReply } from 'fastify';

/** Adds `field` to the response's `Vary` header, keeping what others (CORS) put there. */
export function appendVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const fields = (current === undefined ? '' : String(current))
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (fields.includes('*') || fields.some((name) => name.toLowerCase() === field.toLowerCase())) {
    return;
  }
  void reply.header('vary', [...fields, field].join(', '));
}
