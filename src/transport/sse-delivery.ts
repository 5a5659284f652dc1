// Server-Sent Events over REST (D46, D59): a stream a service makes once, for
// every protocol, delivered as text/event-stream. The service's stream says
// when the caller is admitted ("open": until then a refusal is still a
// problem+json with its status), gives the messages, and says when a
// heartbeat is due; this writes each message as an event in the REST JSON
// (the registry's one writer), the heartbeats as comments, and a credential
// that ends (D53) as an error event, since the status went out long ago.
import { create, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { HttpBodySchema, type HttpBody } from "../gen/google/api/httpbody_pb.js";
import { problemOf } from "../http/problem.js";
import type { JsonShaper } from "../http/json-shape.js";
import { SSE_CONTENT_TYPE, sseComment, sseEvent, sseRetryField } from "../http/sse.js";

/** How soon a browser reconnects after a drop. */
const RETRY_MS = 2_000;

/** What a stream's messages are as events. */
export interface SseEventKind<Desc extends DescMessage> {
  schema: Desc;
  /** The event's type (its `event:` line). */
  event: string;
  /** The field that names a message: written as the event's id (what Last-Event-ID sends back), left out of its data. */
  idField: string;
}

/** A service's stream: "open" once the caller is admitted, then messages, and "heartbeat" when one is due. */
export type SseSource<T> = AsyncIterable<T | "open" | "heartbeat">;

/**
 * Delivers streams of one kind of message. `deliver(ctx, lastEventId, open)`
 * opens the service's stream with the caller's last event id (the request's
 * field, else its Last-Event-ID header) and yields the answer's bodies.
 */
export function sseDelivery<Desc extends DescMessage>(json: JsonShaper, kind: SseEventKind<Desc>) {
  /** Each event's bytes, made once a message: every watcher of it shares one copy (a client slow to read holds none of its own). */
  const events = new WeakMap<MessageShape<Desc>, Uint8Array>();
  const eventOf = (message: MessageShape<Desc>): Uint8Array => {
    let bytes = events.get(message);
    if (bytes === undefined) {
      const { [kind.idField]: id, ...data } = json.json(kind.schema, message) as JsonObject;
      bytes = Buffer.from(sseEvent(typeof id === "string" ? id : undefined, kind.event, JSON.stringify(data)));
      events.set(message, bytes);
    }
    return bytes;
  };

  return async function* deliver(
    ctx: HandlerContext,
    lastEventId: string | undefined,
    open: (lastEventId: string | undefined) => SseSource<MessageShape<Desc>>,
  ): AsyncGenerator<HttpBody> {
    const source = open(lastEventId ?? ctx.requestHeader.get("last-event-id") ?? undefined)[Symbol.asyncIterator]();
    try {
      // A refusal (D13, D46, D54) comes before "open", while the status can still say it.
      const first = await source.next();
      if (first.done) return;
      if (first.value !== "open") throw new Error('an SSE source begins with "open"');
      ctx.responseHeader.set("x-accel-buffering", "no"); // proxies: pass each event on at once
      // The head goes out at once (a comment, no event), so the caller knows the stream is open
      // even when its Last-Event-ID is still the set; the first event carries the retry hint.
      yield body(sseComment("stream open"));
      let retry: string | undefined = sseRetryField(RETRY_MS);
      try {
        for (let next = await source.next(); !next.done; next = await source.next()) {
          const item = next.value;
          if (item === "open") continue;
          if (item === "heartbeat") {
            yield body(sseComment("heartbeat"));
            continue;
          }
          const event = eventOf(item);
          yield body(retry === undefined ? event : Buffer.concat([Buffer.from(retry), event]));
          retry = undefined;
        }
      } catch (e) {
        // D53: the status went out long ago; the refusal is an event the page can read, then the end.
        if (!(e instanceof ConnectError) || e.code !== Code.Unauthenticated) throw e;
        yield body(sseEvent(undefined, "error", JSON.stringify(problemOf(e))));
      }
    } finally {
      await source.return?.(); // the service's stream ends with the answer: its watcher is released
    }
  };
}

function body(data: string | Uint8Array): HttpBody {
  return create(HttpBodySchema, { contentType: SSE_CONTENT_TYPE, data: typeof data === "string" ? Buffer.from(data) : data });
}
