// Keys the server makes for itself, kept in the database so that what they
// sign (cursors) survives restarts and is shared by every process on the file.
import { randomBytes } from "node:crypto";
import type { Db } from "./database.js";

export function serverSecret(db: Db, name: string): Buffer {
  db.prepare("INSERT OR IGNORE INTO server_secrets (name, value) VALUES (?, ?)").run(name, randomBytes(32));
  return (db.prepare("SELECT value FROM server_secrets WHERE name = ?").get(name) as { value: Buffer }).value;
}
