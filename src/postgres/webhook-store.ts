// D63 webhooks and their delivery log in PostgreSQL, shared by replicas.
// One replica delivers at a time: a delivery turn holds a session advisory
// lock on a connection of its own (released when the turn ends, or by the
// server when the process dies), and the others skip their turn. A turn
// records each outcome as it comes, so a replica killed mid-turn leaves only
// the deliveries in flight to be sent again (at least once). A turn lasts
// while any endpoint's lane has a delivery in flight (webhook-delivery.ts):
// every attempt is made under the lock.
import type { Sql } from "./database.js";
import type { DeliveryOutcome, DeliveryRow, DueDelivery, WebhookRow, WebhookStore } from "../featurestatus/webhooks/webhooks.js";

const DELIVERY_LOCK = "meridian.webhook-delivery";

export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly sql: Sql) {}

  async create(w: WebhookRow): Promise<void> {
    await this.sql`INSERT INTO webhooks ${this.sql(w, "id", "url", "secret", "events", "created_at")}`;
  }

  async list(): Promise<WebhookRow[]> {
    return await this.sql<WebhookRow[]>`SELECT * FROM webhooks ORDER BY created_at, id`;
  }

  async get(id: string): Promise<WebhookRow | undefined> {
    const [row] = await this.sql<WebhookRow[]>`SELECT * FROM webhooks WHERE id = ${id}`;
    return row;
  }

  async remove(id: string): Promise<boolean> {
    return this.sql.begin<boolean>(async (tx) => {
      await tx`DELETE FROM webhook_deliveries WHERE webhook_id = ${id}`;
      return (await tx`DELETE FROM webhooks WHERE id = ${id}`).count > 0;
    });
  }

  async deliveries(webhookId: string, messageId: number | undefined, limit: number): Promise<DeliveryRow[]> {
    const m = messageId ?? null;
    return await this.sql<DeliveryRow[]>`
      SELECT d.webhook_id, d.event_id, e.type, d.message_id, d.state, d.attempts, e.at, d.last_at, d.next_at,
             d.last_status, d.last_answer, d.last_error
      FROM webhook_deliveries d JOIN message_events e ON e.id = d.event_id
      WHERE d.webhook_id = ${webhookId} AND (${m}::integer IS NULL OR d.message_id = ${m}::integer)
      ORDER BY d.event_id DESC LIMIT ${limit}`;
  }

  async due(nowMs: number, limit: number, skip: readonly string[] = []): Promise<DueDelivery[]> {
    return await this.sql<DueDelivery[]>`
      SELECT d.webhook_id, d.event_id, e.type, d.message_id, d.state, d.attempts, e.at, d.last_at, d.next_at,
             d.last_status, d.last_answer, d.last_error, w.url, w.secret, e.message
      FROM webhook_deliveries d JOIN message_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.state = 'pending' AND d.next_at <= ${nowMs} AND NOT d.webhook_id = ANY(${skip as string[]}::text[]) AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries p WHERE p.state = 'pending' AND p.webhook_id = d.webhook_id
          AND p.message_id = d.message_id AND p.event_id < d.event_id)
      ORDER BY d.event_id LIMIT ${limit}`;
  }

  async settle(d: { webhook_id: string; event_id: number }, o: DeliveryOutcome): Promise<void> {
    const state = o.delivered ? "delivered" : o.nextAt === undefined ? "failed" : "pending";
    await this.sql`
      UPDATE webhook_deliveries SET state = ${state}, attempts = attempts + 1, last_at = ${o.at}, next_at = ${o.nextAt ?? o.at},
        last_status = ${o.status ?? null}, last_answer = ${o.answer ?? null}, last_error = ${o.error ?? null}
      WHERE webhook_id = ${d.webhook_id} AND event_id = ${d.event_id}`;
  }

  async deliveryTurn(fn: () => Promise<void>): Promise<boolean> {
    const conn = await this.sql.reserve();
    try {
      const [{ locked }] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(hashtext(${DELIVERY_LOCK})) AS locked`;
      if (!locked) return false;
      try {
        await fn();
      } finally {
        await conn`SELECT pg_advisory_unlock(hashtext(${DELIVERY_LOCK}))`;
      }
      return true;
    } finally {
      conn.release();
    }
  }

  async purgeEventsBefore(cutoffMs: number): Promise<number> {
    return this.sql.begin<number>(async (tx) => {
      await tx`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND event_id IN (SELECT id FROM message_events WHERE at < ${cutoffMs})`;
      const gone = await tx`
        DELETE FROM message_events e WHERE at < ${cutoffMs} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`;
      return gone.count;
    });
  }

  async lastChanges(messageIds: number[]): Promise<Map<number, number>> {
    if (messageIds.length === 0) return new Map();
    const rows = await this.sql<{ message_id: number; at: number }[]>`
      SELECT message_id, max(at) AS at FROM message_events
      WHERE type IN ('message.created', 'message.updated') AND message_id = ANY(${messageIds}::integer[]) GROUP BY message_id`;
    return new Map(rows.map((r) => [r.message_id, r.at]));
  }
}
