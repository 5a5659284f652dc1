// The twin of ../server-secrets.ts on PostgreSQL: the first replica to ask
// makes the key, every other reads the same one, so a cursor sealed by one
// replica opens on all of them (D21, D27, D40).
import { randomBytes } from "node:crypto";
import type { Sql } from "./database.js";

export async function pgServerSecret(sql: Sql, name: string): Promise<Buffer> {
  await sql`INSERT INTO server_secrets (name, value) VALUES (${name}, ${randomBytes(32)}) ON CONFLICT (name) DO NOTHING`;
  const [row] = await sql<{ value: Buffer }[]>`SELECT value FROM server_secrets WHERE name = ${name}`;
  return row.value;
}
