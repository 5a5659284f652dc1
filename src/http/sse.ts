// Server-Sent Events framing (WHATWG HTML, 9.2): what a streamed
// text/event-stream answer is made of.
export const SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8";

/**
 * One event; `data` is written as one data line (JSON has no raw newline).
 * Without an id the reader keeps the last one it had (an empty id would reset it).
 */
export function sseEvent(id: string | undefined, event: string, data: string): string {
  if (/[\r\n]/.test((id ?? "") + event + data)) throw new Error("an SSE field may not hold a line break");
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;
}

/** A comment line: ignored by the reader, keeps the connection and its proxies awake. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/**
 * How long a reader waits before reconnecting after a drop, as a field to put
 * in front of an event: a block of `retry:` alone is, to some readers
 * (httpx-sse), an event with empty data, which a client's JSON.parse then
 * fails on (D59). Fields of one event may come in any order.
 */
export function sseRetryField(ms: number): string {
  return `retry: ${ms}\n`;
}
