// D63's outbox in SQLite: an event, written by the caller's transaction (a
// message write's unit of work, or the clock's events), with a delivery row
// for each webhook that takes its type. Time events carry a once_key, so each
// is written once.
import type { Db } from "./database.js";
import { messageImage } from "../featurestatus/messages/message-image.js";
import type { OutboxEvent } from "../featurestatus/messages/message-transactions.js";

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
  append(e: OutboxEvent): boolean {
    const { at, type, message } = e;
    const id = this.eventStmt.get({ at, type, message_id: message.id, message: messageImage(message), once_key: e.onceKey }) as
      number | undefined;
    if (id === undefined) return false;
    this.fanOutStmt.run({ event_id: id, message_id: message.id, type, at });
    return true;
  }
}
