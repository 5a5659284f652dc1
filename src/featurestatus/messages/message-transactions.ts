// The transaction port of message writes: the statements a unit of work
// (kernel/unit-of-work.ts) may run on the messages, the audit trail (D48) and
// the outbox (D63), each store's for its dialect. The statements only store
// and map rows; what a write records, and when it is told, is decided once,
// in message-writes.ts.
import type { Step, UnitOfWork } from "../../kernel/unit-of-work.js";
import type { AuditRecord } from "../audit/audit.js";
import type { MessageData, MessageRecord, NewMessage } from "./message-store.js";
import type { WebhookEvent } from "../webhooks/webhooks.js";

/** D63: an event in the outbox, with a delivery for each endpoint that takes its type. */
export interface OutboxEvent {
  type: WebhookEvent;
  /** The message as the event saw it (its last state, for a delete). */
  message: MessageRecord;
  /** Epoch milliseconds. */
  at: number;
  /** A key an event is written under once only (the clock's events); null: always written. */
  onceKey: string | null;
}

export interface MessageTx {
  /** Inserts and returns the message; fails as messageIdsExhausted when the database has no id left for it. */
  insertMessage(data: NewMessage): Step<MessageRecord>;
  /** Writes `data` over message `id` if it is at `version` (and counts one more); undefined when it is not, or gone. */
  updateMessage(id: number, version: number, data: MessageData): Step<MessageRecord | undefined>;
  /** Deletes message `id` (only at `version`, when given) and returns what it was; undefined when there was none. */
  deleteMessage(id: number, version: number | undefined): Step<MessageRecord | undefined>;
  /** Deletes the messages that expired before the cutoff (epoch seconds) and returns them. */
  deleteExpiredBefore(cutoff: number): Step<MessageRecord[]>;
  /** D63: moves the clock of time events to `nowS` (never back) and returns where it was: undefined the first time (it starts). */
  advanceEventClock(nowS: number): Step<number | undefined>;
  /** The messages whose `field` passed in (after, until], epoch seconds, in that order, then by id. */
  messagesPassing(field: "startDate" | "expiringDate", after: number, until: number): Step<MessageRecord[]>;
  appendAudit(records: readonly AuditRecord[]): Step<void>;
  /** False when an event with its once key was written already (nothing is written then). */
  appendEvent(event: OutboxEvent): Step<boolean>;
}

export type MessageTransactions = UnitOfWork<MessageTx>;
