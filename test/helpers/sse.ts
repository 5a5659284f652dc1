// A Server-Sent Events reader for tests (D46): fetch's body, split into
// events by the blank line; comments come through too, so heartbeats can be
// counted.
export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The next event (or comment), or throws after `ms`. */
  next(ms?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream (or it is cut): "ended" after a clean end, "cut" otherwise. */
  ended: Promise<"ended" | "cut">;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const abort = new AbortController();
  const r = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: abort.signal });
  const queue: SseEvent[] = [];
  const waiters: ((e: SseEvent) => void)[] = [];
  const deliver = (e: SseEvent) => (waiters.length ? waiters.shift()!(e) : queue.push(e));
  let ended = new Promise<"ended" | "cut">(() => {});
  if (r.body && r.headers.get("content-type")?.startsWith("text/event-stream")) {
    ended = (async () => {
      const decoder = new TextDecoder();
      let text = "";
      try {
        for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
          text += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = text.indexOf("\n\n")) !== -1) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const e: SseEvent = {};
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) e.comment = line.slice(1).trim();
              else {
                const at = line.indexOf(":");
                const field = line.slice(0, at) as keyof SseEvent;
                e[field] = (e[field] ? e[field] + "\n" : "") + line.slice(at + 1).replace(/^ /, "");
              }
            }
            deliver(e);
          }
        }
        return "ended" as const;
      } catch {
        return "cut" as const; // closed by either side
      }
    })();
  }
  return {
    status: r.status,
    headers: r.headers,
    next(ms = 5000) {
      if (queue.length) return Promise.resolve(queue.shift()!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms);
        waiters.push((e) => {
          clearTimeout(timer);
          resolve(e);
        });
      });
    },
    ended,
    close: () => abort.abort(),
  };
}

/** The next event that is not a comment or a retry hint. */
export async function nextEvent(s: SseStream, ms = 5000): Promise<SseEvent & { messages: { id: number; title: string }[] }> {
  const end = Date.now() + ms;
  for (;;) {
    const e = await s.next(Math.max(1, end - Date.now()));
    if (e.event) return { ...e, messages: JSON.parse(e.data ?? "{}").data };
  }
}
