/** One Server-Sent Events message, as EventSource would dispatch it. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/** A `text/event-stream` response read over real HTTP, message by message. */
export interface SseStream {
  readonly status: number;
  readonly headers: Headers;
  /** The next message; rejects after `timeoutMs` without one. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Comment lines (`: …`) seen so far. */
  readonly comments: () => number;
  /** Resolves when the server ends the response. */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * Opens `url` with fetch and parses the stream as the EventSource spec does (fields `id`,
 * `event`, `data`, `retry`; comments; messages end at a blank line). A non-2xx answer is
 * returned with its body as one `data` message.
 */
export async function openSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: abort.signal,
  });
  const queue: SseMessage[] = [];
  const waiters: ((message: SseMessage) => void)[] = [];
  let comments = 0;
  const deliver = (message: SseMessage) => {
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  };

  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      if (!response.ok) {
        deliver({ id: undefined, event: 'error', data: await response.text() });
        return;
      }
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments++;
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) deliver({ id, event, data: data.join('\n') });
        }
      }
    } catch {
      // Aborted by close(), or the server dropped the connection.
    }
  })();

  return {
    status: response.status,
    headers: response.headers,
    next(timeoutMs = 5000) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no event within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = (message: SseMessage) => {
          clearTimeout(timer);
          resolve(message);
        };
        waiters.push(waiter);
      });
    },
    comments: () => comments,
    ended,
    close: () => {
      abort.abort();
    },
  };
}
