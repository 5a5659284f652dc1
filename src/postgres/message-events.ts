// D63's outbox in PostgreSQL: an event per change, written by the caller's
// transaction (the message store's), with a delivery row for each webhook
// that takes its type. Time events carry a once_key: written once, whichever
// replica's scheduler gets there first.
import type postgres from "postgres";
import type { MessageRow } from "../featurestatus/message-store.js";
import type { WebhookEvent } from "../featurestatus/webhooks.js";

/** Call inside the change's transaction; false when an event with this once_key was already written. */
export async function recordMessageEvent(
  tx: postgres.TransactionSql,
  type: WebhookEvent,
  row: MessageRow,
  onceKey: string | null = null,
  at = Date.now(),
): Promise<boolean> {
  // ON CONFLICT DO NOTHING: no row when a time event was written already.
  const event = (
    await tx<{ id: number }[]>`
    INSERT INTO message_events (at, type, message_id, message, once_key)
    VALUES (${at}, ${type}, ${row.id}, ${JSON.stringify(row)}, ${onceKey}) ON CONFLICT DO NOTHING RETURNING id`
  ).at(0);
  if (!event) return false;
  await tx`
    INSERT INTO webhook_deliveries (webhook_id, event_id, message_id, next_at)
    SELECT id, ${event.id}, ${row.id}, ${at} FROM webhooks WHERE position(${" " + type + " "} IN ' ' || events || ' ') > 0`;
  return true;
}
