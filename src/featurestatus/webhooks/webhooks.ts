// D63 webhooks: which events there are, what an endpoint may be, how a
// delivery is signed, and what the stores keep of them (both backends).
import { createHmac, randomUUID } from "node:crypto";
import { ViolationList } from "../../kernel/errors.js";
import type { WebhookHosts } from "./webhook-addresses.js";

export const WEBHOOK_EVENTS = ["message.created", "message.updated", "message.deleted", "message.started", "message.expired"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const SECRET_MIN = 16;
export const SECRET_MAX = 256;
export const URL_MAX = 2048;
/** How long an event is retried before its delivery is given up (D63). */
export const RETRY_FOR_MS = 24 * 3600 * 1000;

export interface WebhookRow {
  id: string;
  url: string;
  secret: string;
  /** The events it takes, separated by spaces. */
  events: string;
  /** Epoch milliseconds. */
  created_at: number;
}

/** One event for one endpoint: the delivery log's row. */
export interface DeliveryRow {
  webhook_id: string;
  event_id: number;
  type: string;
  message_id: number;
  /** pending, delivered or failed (given up). */
  state: string;
  attempts: number;
  /** When the event happened, epoch milliseconds. */
  at: number;
  last_at: number | null;
  next_at: number;
  last_status: number | null;
  last_answer: string | null;
  last_error: string | null;
}

/** A delivery that is due, with what sending it needs. */
export interface DueDelivery extends DeliveryRow {
  url: string;
  secret: string;
  /** The message as stored when the event happened (its before-image for a delete), as JSON. */
  message: string;
}

export interface DeliveryOutcome {
  /** Epoch milliseconds. */
  at: number;
  delivered: boolean;
  status?: number;
  answer?: string;
  error?: string;
  /** When to try again; undefined with delivered false: given up. */
  nextAt?: number;
}

export interface WebhookStore {
  create(w: WebhookRow): Promise<void>;
  list(): Promise<WebhookRow[]>;
  get(id: string): Promise<WebhookRow | undefined>;
  /** Removes the endpoint and its delivery log; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** An endpoint's deliveries, newest event first. */
  deliveries(webhookId: string, messageId: number | undefined, limit: number): Promise<DeliveryRow[]>;
  /**
   * Deliveries due at `nowMs`, oldest event first, at most one per endpoint and message: the
   * first still pending, so that a message's events reach an endpoint in order (D63); none of
   * the endpoints in `skip` (their lanes are full, issue 39 item 1).
   */
  due(nowMs: number, limit: number, skip?: readonly string[]): Promise<DueDelivery[]>;
  settle(d: { webhook_id: string; event_id: number }, outcome: DeliveryOutcome): Promise<void>;
  /** Runs fn unless another process is delivering (PostgreSQL); false when skipped. */
  deliveryTurn(fn: () => Promise<void>): Promise<boolean>;
  /** Deletes events older than the cutoff (epoch milliseconds) that no endpoint still waits for, with their log; returns how many. */
  purgeEventsBefore(cutoffMs: number): Promise<number>;
  /** When each message last changed (created or updated), epoch milliseconds, as far as the outbox knows. */
  lastChanges(messageIds: number[]): Promise<Map<number, number>>;
}

/** The D63 signature header's value for a body sent at `t` (unix seconds). */
export function signature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

/** The delay before attempt n+1 after n failed ones: 1 s, doubling, at most an hour. */
export function retryDelayMs(failedAttempts: number): number {
  return Math.min(1000 * 2 ** Math.max(0, failedAttempts - 1), 3600_000);
}

/** A registration checked (D63, issue 29 item 7, issue 39 item 2) and made a row: a new id, the events as stored (every one when none are named). */
export function newWebhook(input: { url: string; secret: string; events: readonly string[] }, hosts: WebhookHosts): WebhookRow {
  const v = new ViolationList();
  let url: URL | undefined;
  if (input.url === "") v.add("url", "is required");
  else if (input.url.length > URL_MAX) v.add("url", `must be at most ${URL_MAX} characters`);
  else if (!URL.canParse(input.url)) v.add("url", "must be an absolute URL");
  else {
    url = new URL(input.url);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const internal = hosts.refuseHost(url.hostname); // issue 39 item 2
    if (url.username || url.password) v.add("url", "must not hold a user name or password (the secret signs each delivery)");
    else if (url.protocol === "http:" && !hosts.mayUseHttp(host)) {
      v.add("url", `must be https: (http: only for hosts in MERIDIAN_WEBHOOK_HTTP_HOSTS; ${host} is not)`);
    } else if (url.protocol !== "https:" && url.protocol !== "http:") v.add("url", "must be https:");
    else if (internal) v.add("url", `must not reach an internal address (${internal})`);
  }
  if (input.secret.length < SECRET_MIN || input.secret.length > SECRET_MAX) {
    v.add("secret", `must be ${SECRET_MIN} to ${SECRET_MAX} characters`);
  }
  const events = new Set<string>();
  input.events.forEach((e, i) => {
    if ((WEBHOOK_EVENTS as readonly string[]).includes(e)) events.add(e);
    else v.add(`events[${i}]`, `must be one of ${WEBHOOK_EVENTS.join(", ")}`);
  });
  v.throwIfAny();
  if (!url) throw new Error("a webhook URL that does not parse is a violation above"); // unreachable: narrows the type
  const stored = (events.size ? [...events] : WEBHOOK_EVENTS).join(" ");
  return { id: randomUUID(), url: url.href, secret: input.secret, events: stored, created_at: Date.now() };
}
