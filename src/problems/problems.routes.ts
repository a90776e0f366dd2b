import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../http/app-error.js';
import { problemResponses } from '../http/openapi-responses.js';
import { PROBLEM_CODES, isProblemCode, type ProblemCode } from '../http/problem-codes.js';

const TAGS = ['problems'];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Inline code spans of the descriptions (`x`) become <code>. */
function renderDescription(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · todo-api</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code{background:#f1f1f1;padding:0 .25em;border-radius:3px}td,th{text-align:left;padding:.25rem .75rem .25rem 0;vertical-align:top}</style>
</head><body>${body}</body></html>`;
}

function codePage(code: ProblemCode): string {
  const entry = PROBLEM_CODES[code];
  return page(
    entry.title,
    `<p><a href="/problems">All problem codes</a></p>
<h1>${escapeHtml(entry.title)}</h1>
<p>HTTP status <strong>${entry.status}</strong> · code <code>${code}</code> · type <code>/problems/${code}</code></p>
<p>${renderDescription(entry.description)}</p>
<p>Every error response is an RFC 9457 <code>application/problem+json</code> document with
<code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>instance</code>,
<code>code</code> and <code>request_id</code>; field-level problems add <code>errors[]</code> with a JSON
Pointer, a code and a message.</p>`,
  );
}

function indexPage(): string {
  const rows = (Object.keys(PROBLEM_CODES) as ProblemCode[])
    .map((code) => {
      const entry = PROBLEM_CODES[code];
      return `<tr><td>${entry.status}</td><td><a href="/problems/${code}"><code>${code}</code></a></td><td>${escapeHtml(entry.title)}</td></tr>`;
    })
    .join('\n');
  return page(
    'Problem codes',
    `<h1>Problem codes</h1><table><tr><th>Status</th><th>Code</th><th>Title</th></tr>${rows}</table>`,
  );
}

/** Human-readable documentation of every problem code: the target of each problem's `type`. */
export const problemsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const html = {
    200: {
      description: 'HTML documentation.',
      content: { 'text/html': { schema: Type.String() } },
    },
  };

  app.get(
    '/problems',
    {
      config: { scope: 'public' },
      schema: {
        operationId: 'listProblemCodes',
        summary: 'Every problem code',
        tags: TAGS,
        response: { ...html, ...problemResponses([]) },
      },
    },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(indexPage()),
  );

  app.get(
    '/problems/:code',
    {
      config: { scope: 'public' },
      schema: {
        operationId: 'getProblemCode',
        summary: 'What one problem code means',
        tags: TAGS,
        params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
        response: { ...html, ...problemResponses(['not-found']) },
      },
    },
    async (request, reply) => {
      const { code } = request.params;
      if (!isProblemCode(code))
        throw new AppError('not-found', `There is no problem code "${code}".`);
      return reply.type('text/html; charset=utf-8').send(codePage(code));
    },
  );
};
