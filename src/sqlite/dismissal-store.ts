// D63 dismissals in SQLite, beside the messages they name (a dismissal goes
// with its message: ON DELETE CASCADE).
import type { Db } from "./database.js";
import type { DismissalStore } from "../featurestatus/messages/dismissals.js";

export class SqliteDismissalStore implements DismissalStore {
  private readonly watchers = new Set<() => void>();
  private readonly dismissStmt;
  private readonly dismissedStmt;

  constructor(db: Db) {
    // Only at the version named: a message changed or deleted meanwhile is not dismissed.
    this.dismissStmt = db.prepare<{ subject: string; id: number; version: number; at: number }>(
      `INSERT INTO message_dismissals (subject, message_id, version, at)
         SELECT @subject, id, version, @at FROM messages WHERE id = @id AND version = @version
       ON CONFLICT (subject, message_id) DO UPDATE SET version = excluded.version, at = excluded.at`,
    );
    this.dismissedStmt = db
      .prepare<[string], number>(
        "SELECT d.message_id FROM message_dismissals d JOIN messages m ON m.id = d.message_id AND m.version = d.version WHERE d.subject = ?",
      )
      .pluck();
  }

  async dismiss(subject: string, messageId: number, version: number): Promise<void> {
    this.dismissStmt.run({ subject, id: messageId, version, at: Date.now() });
    for (const w of this.watchers) w();
  }

  async dismissedBy(subject: string): Promise<Set<number>> {
    return new Set(this.dismissedStmt.all(subject));
  }

  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }
}
