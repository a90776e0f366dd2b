import type { TodoEvent } from '../../../src/events/todo-event.schemas.js';
import { problemOf, type ApiProblem } from './api-problem.js';

export type StreamState = 'connecting' | 'live' | 'offline';

export interface StreamHandlers {
  readonly onEvent: (event: TodoEvent) => void;
  /** The server no longer has the events since the last one seen: list the todos again. */
  readonly onReset: () => void;
  readonly onState: (state: StreamState) => void;
  /** The stream was refused for good (401/403): reconnecting would not help. */
  readonly onRefused: (problem: ApiProblem) => void;
}

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

interface Message {
  id: string | null;
  event: string;
  data: string;
}

/**
 * Reads `GET /api/todos/events` with fetch rather than EventSource, which cannot send the
 * `Authorization` header. Reconnects with `Last-Event-ID` after any interruption, backing off
 * while the server is unreachable. Returns the function that closes it.
 */
export function openEventStream(
  getToken: () => string | null,
  handlers: StreamHandlers,
): () => void {
  const abort = new AbortController();
  let lastEventId: string | null = null;
  let retryMs = FIRST_RETRY_MS;

  const dispatch = (message: Message) => {
    if (message.id !== null) lastEventId = message.id;
    if (message.event === 'reset') handlers.onReset();
    else if (message.event.startsWith('todo.'))
      handlers.onEvent(JSON.parse(message.data) as TodoEvent);
  };

  async function readOnce(): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    const token = getToken();
    if (token) headers.authorization = `Bearer ${token}`;
    if (lastEventId !== null) headers['last-event-id'] = lastEventId;
    handlers.onState('connecting');
    const response = await fetch('/api/todos/events', { headers, signal: abort.signal });
    if (!response.ok || !response.body) {
      const problem = await problemOf(response);
      if (response.status === 401 || response.status === 403) {
        handlers.onRefused(problem);
        abort.abort();
      }
      return;
    }
    handlers.onState('live');
    retryMs = FIRST_RETRY_MS;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let message: Message = { id: null, event: 'message', data: '' };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          if (message.data !== '' || message.event === 'reset') dispatch(message);
          message = { id: null, event: 'message', data: '' };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') message.data += message.data === '' ? value : `\n${value}`;
        else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
      }
    }
  }

  const closed = () => abort.signal.aborted;
  void (async () => {
    while (!closed()) {
      try {
        await readOnce();
      } catch {
        // Dropped or unreachable: reconnect below, unless closed on purpose.
      }
      if (closed()) return;
      handlers.onState('offline');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    }
  })();

  return () => abort.abort();
}
