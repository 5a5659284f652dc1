// REST helpers for the message routes.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { startTestServer, type TestServer } from "./server.js";
import { checkAnswer } from "./openapi.js";

export const RW = { roles: ["BackOffice"], scopes: ["platform_iam_featurestatus_readwrite"] };

export interface ApiMessage {
  id: number;
  featureId: string | null;
  type: string;
  title: string;
  body: string;
  startDate: string;
  expiringDate: string;
}

export function iso(offsetSeconds: number): string {
  return new Date(Date.now() + offsetSeconds * 1000).toISOString().slice(0, 19) + "Z";
}

export function draft(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "Warning", title: "Maintenance", body: "<b>soon</b>", startDate: iso(-3600), expiringDate: iso(3600), ...over };
}

export function api(server: TestServer, key: string) {
  const headers = { "svc-open-api-key": key, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    await checkAnswer(server.url, method, path, r.status, r.headers.get("content-type"), text); // D41
    return { status: r.status, json: text ? JSON.parse(text) : undefined, headers: r.headers };
  };
  return {
    call,
    create: (feature: string | null, body: unknown) =>
      call("POST", feature === null ? "/api/admin/feature/message" : `/api/admin/feature/${feature}/message`, body),
    update: (feature: string | null, id: number, body: unknown) =>
      call("PATCH", feature === null ? `/api/admin/feature/message/${id}` : `/api/admin/feature/${feature}/message/${id}`, body),
    remove: (feature: string | null, id: number) =>
      call("DELETE", feature === null ? `/api/admin/feature/message/${id}` : `/api/admin/feature/${feature}/message/${id}`),
    list: (feature: string | null, query = "") =>
      call("GET", (feature === null ? "/api/admin/feature/message" : `/api/admin/feature/${feature}/message`) + (query ? `?${query}` : "")),
  };
}

/** A server for the file's tests and a BackOffice writer's client of it, filled in by beforeAll. */
export function useMessageServer(env: Record<string, string> = {}): { server: TestServer; a: ReturnType<typeof api>; key: string } {
  const ctx = {} as { server: TestServer; a: ReturnType<typeof api>; key: string };
  beforeAll(async () => {
    ctx.server = await startTestServer(env);
    ctx.key = await ctx.server.key(RW);
    ctx.a = api(ctx.server, ctx.key);
  });
  afterAll(() => ctx.server.close());
  return ctx;
}

const XSS_DIR = fileURLToPath(new URL("../fixtures/xss/", import.meta.url));

/** Every non-empty line of the public payload lists vendored in test/fixtures/xss/. */
export function xssPayloads(): { file: string; payload: string }[] {
  const out: { file: string; payload: string }[] = [];
  for (const file of readdirSync(XSS_DIR)
    .filter((f) => f.endsWith(".txt"))
    .sort()) {
    for (const payload of readFileSync(XSS_DIR + file, "utf8").split("\n")) if (payload.trim() !== "") out.push({ file, payload });
  }
  return out;
}

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * Cursors that differ from an issued one (D21) only in ways a lenient base64
 * decoder would not see: junk after the signature, and the last character
 * with other values in its padding bits (16 bytes of MAC in 22 characters
 * leave the last one's low 4 bits unused).
 */
export function forgedCursors(issued: string): string[] {
  const last = B64URL.indexOf(issued[issued.length - 1]);
  const repadded = [1, 2, 15].map((bits) => issued.slice(0, -1) + B64URL[(last & ~15) | ((last & 15) ^ bits)]);
  return [issued + "!", issued + "=", issued + "==", issued + " ", issued + "#", issued + ".", ...repadded];
}
