// D63 webhooks and their delivery log in SQLite. One process serves a SQLite
// file, so a delivery turn needs no lock beyond the deliverer's own.
import type { Db } from "./database.js";
import type { DeliveryOutcome, DeliveryRow, DueDelivery, WebhookRow, WebhookStore } from "../featurestatus/webhooks/webhooks.js";

const DELIVERY_COLUMNS =
  "d.webhook_id, d.event_id, e.type, d.message_id, d.state, d.attempts, e.at, d.last_at, d.next_at, d.last_status, d.last_answer, d.last_error";

export class SqliteWebhookStore implements WebhookStore {
  constructor(private readonly db: Db) {}

  async create(w: WebhookRow): Promise<void> {
    this.db.prepare("INSERT INTO webhooks (id, url, secret, events, created_at) VALUES (@id, @url, @secret, @events, @created_at)").run(w);
  }

  async list(): Promise<WebhookRow[]> {
    return this.db.prepare("SELECT * FROM webhooks ORDER BY created_at, id").all() as WebhookRow[];
  }

  async get(id: string): Promise<WebhookRow | undefined> {
    return this.db.prepare("SELECT * FROM webhooks WHERE id = ?").get(id) as WebhookRow | undefined;
  }

  async remove(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM webhook_deliveries WHERE webhook_id = ?").run(id);
      return this.db.prepare("DELETE FROM webhooks WHERE id = ?").run(id).changes > 0;
    })();
  }

  async deliveries(webhookId: string, messageId: number | undefined, limit: number): Promise<DeliveryRow[]> {
    return this.db
      .prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN message_events e ON e.id = d.event_id
         WHERE d.webhook_id = @webhookId AND (@messageId IS NULL OR d.message_id = @messageId) ORDER BY d.event_id DESC LIMIT @limit`,
      )
      .all({ webhookId, messageId: messageId ?? null, limit }) as DeliveryRow[];
  }

  async due(nowMs: number, limit: number, skip: readonly string[] = []): Promise<DueDelivery[]> {
    return this.db
      .prepare(
        `SELECT ${DELIVERY_COLUMNS}, w.url, w.secret, e.message FROM webhook_deliveries d
         JOIN message_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.state = 'pending' AND d.next_at <= @nowMs AND d.webhook_id NOT IN (SELECT value FROM json_each(@skip)) AND NOT EXISTS (
           SELECT 1 FROM webhook_deliveries p WHERE p.state = 'pending' AND p.webhook_id = d.webhook_id
             AND p.message_id = d.message_id AND p.event_id < d.event_id)
         ORDER BY d.event_id LIMIT @limit`,
      )
      .all({ nowMs, limit, skip: JSON.stringify(skip) }) as DueDelivery[];
  }

  async settle(d: { webhook_id: string; event_id: number }, o: DeliveryOutcome): Promise<void> {
    this.db
      .prepare(
        `UPDATE webhook_deliveries SET state = @state, attempts = attempts + 1, last_at = @at, next_at = @nextAt,
           last_status = @status, last_answer = @answer, last_error = @error WHERE webhook_id = @webhook_id AND event_id = @event_id`,
      )
      .run({
        webhook_id: d.webhook_id,
        event_id: d.event_id,
        state: o.delivered ? "delivered" : o.nextAt === undefined ? "failed" : "pending",
        at: o.at,
        nextAt: o.nextAt ?? o.at,
        status: o.status ?? null,
        answer: o.answer ?? null,
        error: o.error ?? null,
      });
  }

  async deliveryTurn(fn: () => Promise<void>): Promise<boolean> {
    await fn();
    return true;
  }

  async purgeEventsBefore(cutoffMs: number): Promise<number> {
    return this.db.transaction(() => {
      this.db
        .prepare("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND event_id IN (SELECT id FROM message_events WHERE at < ?)")
        .run(cutoffMs);
      return this.db
        .prepare(
          "DELETE FROM message_events WHERE at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = message_events.id)",
        )
        .run(cutoffMs).changes;
    })();
  }

  async lastChanges(messageIds: number[]): Promise<Map<number, number>> {
    if (messageIds.length === 0) return new Map();
    const rows = this.db
      .prepare(
        `SELECT message_id, max(at) AS at FROM message_events WHERE type IN ('message.created', 'message.updated')
         AND message_id IN (SELECT value FROM json_each(?)) GROUP BY message_id`,
      )
      .all(JSON.stringify(messageIds)) as { message_id: number; at: number }[];
    return new Map(rows.map((r) => [r.message_id, r.at]));
  }
}
