// D63's outbox in SQLite: an event per change, written by the caller's
// transaction (the message store's), with a delivery row for each webhook
// that takes its type. Time events carry a once_key, so each is written once.
import type { Db } from "./database.js";
import type { MessageRow } from "../featurestatus/message-store.js";
import type { WebhookEvent } from "../featurestatus/webhooks.js";

export class SqliteMessageEvents {
  private readonly eventStmt;
  private readonly fanOutStmt;

  constructor(db: Db) {
    this.eventStmt = db
      .prepare<{ at: number; type: string; message_id: number; message: string; once_key: string | null }>(
        "INSERT INTO message_events (at, type, message_id, message, once_key) VALUES (@at, @type, @message_id, @message, @once_key) ON CONFLICT DO NOTHING RETURNING id",
      )
      .pluck();
    this.fanOutStmt = db.prepare<{ event_id: number; message_id: number; type: string; at: number }>(
      "INSERT INTO webhook_deliveries (webhook_id, event_id, message_id, next_at) SELECT id, @event_id, @message_id, @at FROM webhooks WHERE instr(' ' || events || ' ', ' ' || @type || ' ') > 0",
    );
  }

  /** Call inside the change's transaction; false when an event with this once_key was already written. */
  record(type: WebhookEvent, row: MessageRow, onceKey: string | null = null, at = Date.now()): boolean {
    const id = this.eventStmt.get({ at, type, message_id: row.id, message: JSON.stringify(row), once_key: onceKey }) as number | undefined;
    if (id === undefined) return false;
    this.fanOutStmt.run({ event_id: id, message_id: row.id, type, at });
    return true;
  }
}
