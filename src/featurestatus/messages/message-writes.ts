// Every write of messages, as one unit of work each over the transaction port
// (message-transactions.ts): the change itself, then what every change leaves
// behind, decided here once for every write and both dialects: its audit
// record (D48) and its outbox event (D63) in the same transaction, and, once
// committed, a word on the change bus (D46) for the watchers. The clock's
// events (message.started, message.expired) are decided here too.
import type { Step } from "../../kernel/unit-of-work.js";
import type { Actor, AuditAction, AuditRecord } from "../audit/audit.js";
import type { ChangeBus } from "../live/change-bus.js";
import { messageImage } from "./message-image.js";
import { MAX_MESSAGE_ID, messageIdsExhausted, type MessageData, type MessageRecord, type NewMessage } from "./message-store.js";
import type { MessageTransactions, MessageTx } from "./message-transactions.js";
import type { WebhookEvent } from "../webhooks/webhooks.js";

/** A change of one message: `before` into `after` (one of them present). */
interface Change {
  action: AuditAction;
  before?: MessageRecord;
  after?: MessageRecord;
}

/** D63: the event each action is told as; the retention cleanup's deletions are none. */
const EVENTS: Record<AuditAction, WebhookEvent | undefined> = {
  create: "message.created",
  update: "message.updated",
  delete: "message.deleted",
  cleanup: undefined,
};

/** D63: the events the clock writes, and the field whose passing each tells. */
const TIME_EVENTS = [
  ["message.started", "startDate"],
  ["message.expired", "expiringDate"],
] as const;

export class MessageWrites {
  constructor(
    private readonly transactions: MessageTransactions,
    private readonly changes: ChangeBus,
    /** Epoch milliseconds, for the audit trail and the outbox. */
    private readonly clock: () => number = Date.now,
  ) {}

  /** Inserts and returns the message; refuses (and stores nothing) once ids pass the API's int32. */
  create(data: NewMessage, by?: Actor): Promise<MessageRecord> {
    return this.write(by, function* (tx) {
      const after = yield* tx.insertMessage(data);
      if (after.id > MAX_MESSAGE_ID) throw messageIdsExhausted();
      return { result: after, changes: [{ action: "create", after }] };
    });
  }

  /**
   * Writes `after`'s fields over `before` if the stored message is still at `before.version` (and
   * counts one more); undefined when it is not, or the row is gone. Every write moves the version,
   * so when it writes, `before` is what it replaced: the audit's before-image, not read again.
   */
  update(before: MessageRecord, after: MessageData, by?: Actor): Promise<MessageRecord | undefined> {
    return this.write(by, function* (tx) {
      const written = yield* tx.updateMessage(before.id, before.version, after);
      return { result: written, changes: written ? [{ action: "update", before, after: written }] : [] };
    });
  }

  /** Deletes the message (only at `version`, when given); false when there was no such message. */
  delete(id: number, version: number | undefined, by?: Actor): Promise<boolean> {
    return this.write(by, function* (tx) {
      const before = yield* tx.deleteMessage(id, version);
      return { result: before !== undefined, changes: before ? [{ action: "delete", before }] : [] };
    });
  }

  /** D22: deletes messages that expired before the cutoff (epoch seconds), recorded as the cleanup's; returns how many. */
  purgeExpiredBefore(cutoff: number): Promise<number> {
    return this.write(undefined, function* (tx) {
      const gone = yield* tx.deleteExpiredBefore(cutoff);
      return { result: gone.length, changes: gone.map((before) => ({ action: "cleanup", before })) };
    });
  }

  /**
   * D63: writes message.started and message.expired for each message whose start or expiry passed
   * since the last call on any process of the database, each once (its once key); returns how many.
   * The first call starts the clock: nothing before it is an event. No message changes.
   */
  recordTimeEvents(nowS: number): Promise<number> {
    return this.transactions.run(function* (tx) {
      const mark = yield* tx.advanceEventClock(nowS);
      if (mark === undefined || mark >= nowS) return 0;
      let written = 0;
      for (const [type, field] of TIME_EVENTS) {
        for (const message of yield* tx.messagesPassing(field, mark, nowS)) {
          const event = { type, message, at: message[field] * 1000, onceKey: `${type}:${message.id}:${message[field]}` };
          if (yield* tx.appendEvent(event)) written++;
        }
      }
      return written;
    });
  }

  /** Runs a change and its effects in one transaction; tells the watchers once it is committed. */
  private async write<T>(by: Actor | undefined, change: (tx: MessageTx) => Step<{ result: T; changes: Change[] }>): Promise<T> {
    const at = this.clock();
    const { result, changed } = await this.transactions.run(function* (tx) {
      const { result, changes } = yield* change(tx);
      yield* recordEffects(tx, changes, by, at);
      return { result, changed: changes.length > 0 };
    });
    if (changed) this.changes.publish();
    return result;
  }
}

/** D48, D63: what every change leaves behind in its transaction: an audit record, and its event with a delivery per endpoint. */
function* recordEffects(tx: MessageTx, changes: readonly Change[], by: Actor | undefined, at: number): Step<void> {
  if (changes.length === 0) return;
  yield* tx.appendAudit(changes.map((c) => auditRecord(c, by, at)));
  for (const c of changes) {
    const type = EVENTS[c.action];
    const message = c.after ?? c.before;
    if (type && message) yield* tx.appendEvent({ type, message, at, onceKey: null });
  }
}

function auditRecord(c: Change, by: Actor | undefined, at: number): AuditRecord {
  const m = c.after ?? c.before;
  if (!m) throw new TypeError("an audit record needs the message before or after the change");
  return {
    at,
    action: c.action,
    messageId: m.id,
    featureId: m.featureId,
    clientId: by?.clientId ?? null,
    keyId: by?.keyId ?? null,
    issuer: by?.issuer ?? null,
    subject: by?.subject ?? null,
    before: c.before ? messageImage(c.before) : null,
    after: c.after ? messageImage(c.after) : null,
  };
}
