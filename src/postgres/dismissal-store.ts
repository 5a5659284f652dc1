// D63 dismissals in PostgreSQL: every replica learns of one through the
// change feed (a trigger on the table), so a person's streams on any replica
// carry it.
import type { Sql } from "./database.js";
import type { ChangeFeed } from "./changes.js";
import type { DismissalStore } from "../featurestatus/messages/dismissals.js";

const TABLE = "message_dismissals";

export class PostgresDismissalStore implements DismissalStore {
  constructor(
    private readonly sql: Sql,
    private readonly changes: ChangeFeed,
  ) {}

  async dismiss(subject: string, messageId: number, version: number): Promise<void> {
    try {
      // Only at the version named: a message changed or deleted meanwhile is not dismissed.
      await this.sql`
        INSERT INTO message_dismissals (subject, message_id, version, at)
          SELECT ${subject}, id, version, ${Date.now()} FROM messages WHERE id = ${messageId} AND version = ${version}
        ON CONFLICT (subject, message_id) DO UPDATE SET version = excluded.version, at = excluded.at`;
    } finally {
      this.changes.changed(TABLE);
    }
  }

  async dismissedBy(subject: string): Promise<Set<number>> {
    const rows = await this.sql<{ message_id: number }[]>`
      SELECT d.message_id FROM message_dismissals d JOIN messages m ON m.id = d.message_id AND m.version = d.version
      WHERE d.subject = ${subject}`;
    return new Set(rows.map((r) => r.message_id));
  }

  watch(fn: () => void): () => void {
    // "*": the listening connection was lost and is back; anything may have changed.
    return this.changes.watch((table) => (table === TABLE || table === "*") && fn());
  }
}
