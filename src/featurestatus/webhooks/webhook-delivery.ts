// D63 delivery: a loop that writes the clock's events (message.started,
// message.expired) and sends what the outbox holds, at once after a write and
// at least every tick. Each delivery is a signed JSON POST with undici's fetch:
// no redirect followed, 5 s for the whole answer, at most 1 KB of it kept,
// never to an internal address the operator did not allow (issue 39 item 2);
// anything but a 2xx is tried again with backoff until 24 hours after the event.
//
// Each endpoint has a lane of its own (issue 39 item 1): the turn hands each
// due delivery to its endpoint's lane and goes on, so a receiver that takes
// its 5 s holds back only its own events. The turn lasts while anything is in
// flight, fetching more as deliveries end, writes arrive and ticks pass: every
// send happens while the turn holds the store's deliveryTurn (on PostgreSQL
// the advisory lock), so one replica delivers at a time, as before.
import { MessageSchema } from "../../gen/meridian/featurestatus/v1/feature_status_pb.js";
import { fetch, type Dispatcher, type Response } from "undici";
import type { DescMessage, JsonValue, MessageShape } from "@bufbuild/protobuf";
import type { Logger } from "../../log/logger.js";
import type { ChangeWatch } from "../live/change-bus.js";
import { fromMessageImage } from "../messages/message-image.js";
import { toMessage } from "../messages/message-protos.js";
import { EDITING } from "../listings/reader-view.js"; // the whole message, every translation: endpoints are BackOffice's
import { WebhookHosts } from "./webhook-addresses.js";
import { guardedAgent, RefusedAddress } from "./webhook-dispatcher.js";
import { RETRY_FOR_MS, retryDelayMs, signature, type DeliveryOutcome, type DueDelivery, type WebhookStore } from "./webhooks.js";

export const DELIVERY_TIMEOUT_MS = 5_000;
export const ANSWER_BYTES = 1024;
/** Deliveries fetched at a time beyond those in flight. */
const BATCH = 50;
/** Deliveries of one endpoint in flight at once (of different messages: a message's next event waits for its last). */
export const PER_ENDPOINT = 8;

export interface DeliveryOptions {
  store: WebhookStore;
  /** D63: writes the clock's events (message.started, message.expired) up to `nowS`, each once (MessageWrites.recordTimeEvents). */
  timeEvents: (nowS: number) => Promise<number>;
  /** Told of every message write (this process's, and on PostgreSQL every replica's): a delivery turn starts at once. */
  changes: ChangeWatch;
  /** The REST JSON writer (the service registry's): a delivery's message is written as the API writes it. */
  json: JsonWriter;
  /** Hosts that may be reached although internal (MERIDIAN_WEBHOOK_HOSTS, MERIDIAN_WEBHOOK_HTTP_HOSTS); none by default. */
  hosts?: WebhookHosts;
  /** Told of each failed attempt, at warn (issue 39 item 13). */
  logger?: Pick<Logger, "warn">;
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

/** How the REST answers write a message as JSON (the transport's http/json-shape.ts is one). */
export interface JsonWriter {
  json<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue;
}

/** The body of a delivery: the event, and the message as it was (its last state, for a delete). */
export function deliveryBody(d: Pick<DueDelivery, "event_id" | "type" | "at" | "message">, json: JsonWriter): string {
  const message = json.json(MessageSchema, toMessage(fromMessageImage(d.message), EDITING));
  return JSON.stringify({ id: String(d.event_id), type: d.type, createdAt: new Date(d.at).toISOString(), data: { message } });
}

export function startWebhookDelivery(opts: DeliveryOptions): Delivery {
  const stopping = new AbortController();
  const hosts = opts.hosts ?? new WebhookHosts({});
  const agent = guardedAgent(hosts);
  /** Each endpoint's lane: the event ids of its deliveries in flight. */
  const lanes = new Map<string, Set<number>>();
  const sending = new Set<Promise<void>>();
  const woken = new Wakeup();
  /** Deliveries that left their lane while a query for due ones ran: it may have read them before they were settled. */
  let settledDuringQuery: Set<string> | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let clockDue = false;

  const dispatch = (d: DueDelivery): void => {
    const lane = lanes.get(d.webhook_id) ?? new Set<number>();
    lanes.set(d.webhook_id, lane);
    lane.add(d.event_id);
    const sent = (async () => {
      const outcome = await send(deliveryBody(d, opts.json), d, { stop: stopping.signal, agent, hosts, userAgent: opts.userAgent });
      if (!outcome) return true;
      await opts.store.settle(d, outcome);
      if (!outcome.delivered) logFailure(opts.logger, d, outcome);
      return true;
    })()
      .catch((e: unknown) => {
        opts.onError?.(e); // not settled: still pending, sent again by a later turn
        return false;
      })
      .then((settled) => {
        // Out of its lane only once settled: a query in between would send it again.
        lane.delete(d.event_id);
        if (lane.size === 0) lanes.delete(d.webhook_id);
        settledDuringQuery?.add(`${d.webhook_id} ${d.event_id}`);
        sending.delete(sent);
        if (settled) woken.notify(); // after a failure (the database away, say), the next write or tick tries again
      });
    sending.add(sent);
  };

  /** The turn's work, under the store's deliveryTurn: until nothing is due and nothing in flight. */
  const deliver = async (): Promise<void> => {
    try {
      while (!stopping.signal.aborted) {
        woken.clear();
        again = false; // a write from here on is seen by the query below, or wakes this loop
        if (clockDue) {
          clockDue = false;
          await opts.timeEvents(Math.floor(Date.now() / 1000));
        }
        const full = [...lanes].filter(([, lane]) => lane.size >= PER_ENDPOINT).map(([id]) => id);
        // In flight deliveries are due still (pending until settled): fetched and passed over.
        const settled = (settledDuringQuery = new Set());
        const due = await opts.store.due(Date.now(), BATCH + sending.size, full).finally(() => (settledDuringQuery = undefined));
        let started = 0;
        for (const d of due) {
          const lane = lanes.get(d.webhook_id);
          if (lane && (lane.has(d.event_id) || lane.size >= PER_ENDPOINT)) continue;
          if (settled.has(`${d.webhook_id} ${d.event_id}`)) continue; // as it was before its outcome: the next query sees it as it is
          dispatch(d);
          started++;
        }
        if (started === 0 && sending.size === 0) return;
        if (started < BATCH) await woken.wait(); // a delivery ended, a write, a tick, or stop
      }
    } finally {
      // Nothing is sent once the turn is over (on stop, the sends were aborted and end at once).
      await Promise.all(sending);
    }
  };

  const turn = async (): Promise<void> => {
    clockDue = false;
    await opts.timeEvents(Math.floor(Date.now() / 1000));
    await opts.store.deliveryTurn(deliver);
  };

  const kick = (): void => {
    if (stopping.signal.aborted) return;
    if (running) {
      again = true;
      woken.notify();
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

  const timer = setInterval(() => {
    clockDue = true;
    kick();
  }, opts.tickMs ?? 1000);
  timer.unref();
  const unwatch = opts.changes.watch(kick);
  kick();
  return {
    async stop() {
      stopping.abort();
      woken.notify();
      clearInterval(timer);
      unwatch();
      await running;
      await agent.destroy().catch(() => {});
    },
  };
}

/** Lets the turn sleep until something happened; a notice before the wait is not lost. */
class Wakeup {
  private noticed = false;
  private resolve: (() => void) | undefined;

  notify(): void {
    this.noticed = true;
    this.resolve?.();
    this.resolve = undefined;
  }

  clear(): void {
    this.noticed = false;
  }

  async wait(): Promise<void> {
    if (!this.noticed) await new Promise<void>((resolve) => (this.resolve = resolve));
    this.noticed = false;
  }
}

/** One failed attempt as the log says it (issue 39 item 13): where, what, why, and what comes next. */
function logFailure(logger: Pick<Logger, "warn"> | undefined, d: DueDelivery, o: DeliveryOutcome): void {
  const next = o.nextAt === undefined ? undefined : new Date(o.nextAt).toISOString();
  const why = o.error ?? `HTTP ${o.status}`;
  logger?.warn(
    {
      webhookId: d.webhook_id,
      url: withoutUserinfo(d.url),
      eventId: String(d.event_id),
      event: d.type,
      messageId: d.message_id,
      attempt: d.attempts + 1,
      status: o.status,
      error: o.error,
      nextAttemptAt: next,
      givenUp: next === undefined,
    },
    `webhook delivery failed: ${why}; ${next ? `tried again at ${next}` : "given up, 24 hours after the event"}`,
  );
}

function withoutUserinfo(url: string): string {
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  u.username = "";
  u.password = "";
  return u.href;
}

/** One attempt; undefined when abandoned because the loop stops (the delivery stays as it was). */
async function send(
  body: string,
  d: DueDelivery,
  how: { stop: AbortSignal; agent: Dispatcher; hosts: WebhookHosts; userAgent?: string },
): Promise<DeliveryOutcome | undefined> {
  const { stop } = how;
  const t = Math.floor(Date.now() / 1000);
  const timeout = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
  let status: number | undefined;
  let answer: string | undefined;
  let error: string | undefined;
  try {
    const url = new URL(d.url);
    // Refused before connecting: a URL stored with credentials (registration refuses one; fetch's
    // own error would quote them), and an address literal or a name of localhost (issue 39 item 2).
    if (url.username || url.password) error = "the URL holds a user name or password; register it again without";
    else error = how.hosts.refuseHost(url.hostname);
    if (error === undefined) {
      const res = await fetch(url, {
        method: "POST",
        redirect: "manual", // a redirect is an answer, not a new address (issue 29 item 7)
        signal: AbortSignal.any([timeout, stop]),
        dispatcher: how.agent, // refuses a name that resolves to an internal address
        headers: {
          "content-type": "application/json",
          "user-agent": how.userAgent ?? "Meridian",
          "meridian-event": d.type,
          "meridian-event-id": String(d.event_id),
          "meridian-signature": signature(d.secret, t, body),
        },
        body,
      });
      status = res.status;
      answer = await firstBytes(res, ANSWER_BYTES);
      if (res.status >= 300 && res.status < 400) error = `redirect to ${res.headers.get("location") ?? "nowhere"} not followed`;
    }
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
  const reader = (res.body as ReadableStream<Uint8Array>).getReader(); // undici's own stream type says any
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
  if (cause instanceof RefusedAddress) return cause.message;
  return cause?.code ? `${cause.code}: ${cause.message ?? ""}`.trim() : e instanceof Error ? e.message : String(e);
}
