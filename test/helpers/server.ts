// A real Meridian on a free port with its own SQLite file, and a log stream
// the test can read.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { SignJWT } from "jose";
import { startMeridian, type Meridian } from "../../src/app.js";
import type { ApiKeyGrant } from "../../src/auth/api-keys.js";
import { SqliteApiKeyStore } from "../../src/auth/api-keys-sqlite.js";
import { loadSettings } from "../../src/config/settings.js";

export const JWT_SECRET = "test-secret-of-thirty-two-bytes!!";

export interface TestServer {
  app: Meridian;
  url: string;
  dir: string;
  logs: Record<string, unknown>[];
  /** A fresh API key with this grant. */
  key(grant: Partial<ApiKeyGrant>): string;
  close(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "meridian-test-"));
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const settings = loadSettings({
    MERIDIAN_PORT: "0",
    MERIDIAN_METRICS: "public",
    MERIDIAN_DB: join(dir, "meridian.db"),
    MERIDIAN_JWT_SECRET: JWT_SECRET,
    ...env,
  });
  const app = await startMeridian(settings, pino({ level: "info" }, sink));
  const store = new SqliteApiKeyStore(app.db);
  return {
    app,
    url: app.url,
    dir,
    logs,
    key: (grant) => store.createNow({ clientId: "client", roles: [], scopes: [], projects: [], ...grant }).key,
    async close() {
      await app.close(1000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An HS256 token signed with the test secret; claims override the defaults. */
export async function signToken(claims: Record<string, unknown>, opts: { expiresIn?: string | number | null; secret?: string } = {}): Promise<string> {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt();
  if (opts.expiresIn !== null) jwt = jwt.setExpirationTime(opts.expiresIn ?? "5m");
  return jwt.sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
}

/** The secret part of an API key "mrd_<id>_<secret>" (the secret may itself contain "_"). */
export function secretOf(key: string): string {
  return key.slice(key.indexOf("_", 4) + 1);
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
