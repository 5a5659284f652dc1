// D63's outbox in PostgreSQL: an event, written by the caller's transaction
// (a message write's unit of work, or the clock's events), with a delivery
// row for each webhook that takes its type. Time events carry a once_key:
// written once, whichever replica's scheduler gets there first.
import type postgres from "postgres";
import { messageImage } from "../featurestatus/messages/message-image.js";
import type { OutboxEvent } from "../featurestatus/messages/message-transactions.js";

/** Call inside the change's transaction; false when an event with this once_key was already written. */
export async function appendMessageEvent(tx: postgres.TransactionSql, e: OutboxEvent): Promise<boolean> {
  const { at, type, message } = e;
  // ON CONFLICT DO NOTHING: no row when a time event was written already.
  const event = (
    await tx<{ id: number }[]>`
    INSERT INTO message_events (at, type, message_id, message, once_key)
    VALUES (${at}, ${type}, ${message.id}, ${messageImage(message)}, ${e.onceKey}) ON CONFLICT DO NOTHING RETURNING id`
  ).at(0);
  if (!event) return false;
  await tx`
    INSERT INTO webhook_deliveries (webhook_id, event_id, message_id, next_at)
    SELECT id, ${event.id}, ${message.id}, ${at} FROM webhooks WHERE position(${" " + type + " "} IN ' ' || events || ' ') > 0`;
  return true;
}
