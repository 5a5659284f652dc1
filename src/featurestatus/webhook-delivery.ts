// D63 delivery: a loop that writes the clock's events (message.started,
// message.expired) and sends what the outbox holds, at once after a write and
// at least every tick. Each delivery is a signed JSON POST with Node's fetch:
// no redirect followed, 5 s for the whole answer, at most 1 KB of it kept;
// anything but a 2xx is tried again with backoff until 24 hours after the event.
import { MessageSchema } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { JsonShaper } from "../core/json-shape.js";
import type { MessageRow, MessageStore } from "./message-store.js";
import { toMessage } from "./message-protos.js";
import { EDITING } from "./reader-view.js"; // the whole message, every translation: endpoints are BackOffice's
import { RETRY_FOR_MS, retryDelayMs, signature, type DeliveryOutcome, type DueDelivery, type WebhookStore } from "./webhooks.js";

export const DELIVERY_TIMEOUT_MS = 5_000;
export const ANSWER_BYTES = 1024;
const BATCH = 50;

export interface DeliveryOptions {
  store: WebhookStore;
  /** Told of every message write (this process's, and on PostgreSQL every replica's): a delivery turn starts at once. */
  messages: Pick<MessageStore, "watch">;
  /** The REST JSON writer (the service registry's): a delivery's message is written as the API writes it. */
  json: JsonShaper;
  /** How often the clock's events are written and due retries sent. */
  tickMs?: number;
  /** Told of a turn that failed (the database away, say); the next tick tries again. */
  onError?: (e: unknown) => void;
  userAgent?: string;
}

export interface Delivery {
  /** Ends the loop; deliveries in flight are abandoned (and sent again by the next turn, anywhere). */
  stop(): Promise<void>;
}

/** The body of a delivery: the event, and the message as it was (its last state, for a delete). */
export function deliveryBody(d: Pick<DueDelivery, "event_id" | "type" | "at" | "message">, json: JsonShaper): string {
  const message = json.json(MessageSchema, toMessage(JSON.parse(d.message) as MessageRow, EDITING));
  return JSON.stringify({ id: String(d.event_id), type: d.type, createdAt: new Date(d.at).toISOString(), data: { message } });
}

export function startWebhookDelivery(opts: DeliveryOptions): Delivery {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let again = false;

  const turn = async (): Promise<void> => {
    await opts.store.recordTimeEvents(Math.floor(Date.now() / 1000));
    await opts.store.deliveryTurn(async () => {
      for (;;) {
        if (stopping.signal.aborted) return;
        const due = await opts.store.due(Date.now(), BATCH);
        if (due.length === 0) return;
        // At most one per endpoint and message (due's rule), so these may go at once.
        await Promise.all(
          due.map(async (d) => {
            const outcome = await send(deliveryBody(d, opts.json), d, stopping.signal, opts.userAgent);
            if (outcome) await opts.store.settle(d, outcome);
          }),
        );
      }
    });
  };

  const kick = (): void => {
    if (stopping.signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = turn()
      .catch((e: unknown) => opts.onError?.(e))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  };

  const timer = setInterval(kick, opts.tickMs ?? 1000);
  timer.unref();
  const unwatch = opts.messages.watch(kick);
  kick();
  return {
    async stop() {
      stopping.abort();
      clearInterval(timer);
      unwatch();
      await running;
    },
  };
}

/** One attempt; undefined when abandoned because the loop stops (the delivery stays as it was). */
async function send(body: string, d: DueDelivery, stop: AbortSignal, userAgent = "Meridian"): Promise<DeliveryOutcome | undefined> {
  const t = Math.floor(Date.now() / 1000);
  const timeout = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
  let status: number | undefined;
  let answer: string | undefined;
  let error: string | undefined;
  try {
    const res = await fetch(d.url, {
      method: "POST",
      redirect: "manual", // a redirect is an answer, not a new address (issue 29 item 7)
      signal: AbortSignal.any([timeout, stop]),
      headers: {
        "content-type": "application/json",
        "user-agent": userAgent,
        "meridian-event": d.type,
        "meridian-event-id": String(d.event_id),
        "meridian-signature": signature(d.secret, t, body),
      },
      body,
    });
    status = res.status;
    answer = await firstBytes(res, ANSWER_BYTES);
    if (res.status >= 300 && res.status < 400) error = `redirect to ${res.headers.get("location") ?? "nowhere"} not followed`;
  } catch (e) {
    if (stop.aborted) return undefined;
    error = timeout.aborted ? `no whole answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : describe(e);
  }
  const at = Date.now();
  const delivered = status !== undefined && status >= 200 && status < 300 && error === undefined;
  if (delivered) return { at, delivered, status, answer };
  const nextAt = at + retryDelayMs(d.attempts + 1);
  return { at, delivered, status, answer, error, nextAt: nextAt <= d.at + RETRY_FOR_MS ? nextAt : undefined };
}

/** The answer's first `max` bytes as text; the rest is not read. */
async function firstBytes(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  while (n < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    n += value.length;
  }
  if (n >= max) await reader.cancel().catch(() => {});
  let text = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max));
  // A character cut at the limit decodes as U+FFFD, which may take more bytes than the part it replaces.
  while (Buffer.byteLength(text) > max) text = text.slice(0, -1);
  return text;
}

/** Why there was no answer, as the log keeps it: the system's error code when there is one. */
function describe(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${cause.code}: ${cause.message ?? ""}`.trim() : e instanceof Error ? e.message : String(e);
}
