// D10-D12: API keys and JWTs resolve to a principal; bad ones get 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT, exportJWK, generateKeyPair, UnsecuredJWT } from "jose";
import { bearer, secretOf, signToken, startTestServer, type TestServer } from "../helpers/server.js";

const PATH = "/api/admin/feature/message";
const claims = { client_id: "app1", scope: "platform_iam_featurestatus_read", role: "BackOffice" };

/** 401 means the credential was refused; anything else means it was accepted. */
async function statusWith(server: TestServer, headers: Record<string, string>): Promise<number> {
  return (await fetch(server.url + PATH, { headers })).status;
}

describe("D12 JWTs with an HS256 secret", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("D12 a valid HS256 token is accepted", async () => {
    expect(await statusWith(server, bearer(await signToken(claims)))).not.toBe(401);
  });

  it("D12 a token signed with another secret is refused", async () => {
    expect(await statusWith(server, bearer(await signToken(claims, { secret: "another-secret-another-secret-xx" })))).toBe(401);
  });

  it("D12 alg none is refused", async () => {
    const token = new UnsecuredJWT(claims).setIssuedAt().setExpirationTime("5m").encode();
    expect(await statusWith(server, bearer(token))).toBe(401);
  });

  it("D12 an expired token is refused", async () => {
    expect(await statusWith(server, bearer(await signToken(claims, { expiresIn: Math.floor(Date.now() / 1000) - 60 })))).toBe(401);
  });

  it("D12 a token without exp is refused", async () => {
    expect(await statusWith(server, bearer(await signToken(claims, { expiresIn: null })))).toBe(401);
  });

  it("D12 a tampered payload is refused", async () => {
    const [h, , s] = (await signToken(claims)).split(".");
    const forged = Buffer.from(JSON.stringify({ ...claims, role: "BackOffice", exp: 9999999999 })).toString("base64url");
    expect(await statusWith(server, bearer(`${h}.${forged}.${s}`))).toBe(401);
  });

  it("D12 an RS256 token is refused when only a secret is configured (algorithms pinned)", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256" }).setExpirationTime("5m").sign(privateKey);
    expect(await statusWith(server, bearer(token))).toBe(401);
  });

  it("D10 a malformed Authorization header is refused", async () => {
    expect(await statusWith(server, { authorization: "Basic dXNlcjpwYXNz" })).toBe(401);
    expect(await statusWith(server, { authorization: "Bearer" })).toBe(401);
  });
});

describe("D12 issuer and audience when configured", () => {
  let server: TestServer;
  beforeAll(
    async () => (server = await startTestServer({ MERIDIAN_JWT_ISSUER: "https://idp.example", MERIDIAN_JWT_AUDIENCE: "meridian" })),
  );
  afterAll(() => server.close());

  it("D12 the right issuer and audience are accepted", async () => {
    expect(await statusWith(server, bearer(await signToken({ ...claims, iss: "https://idp.example", aud: "meridian" })))).not.toBe(401);
  });
  it("D12 a wrong issuer is refused", async () => {
    expect(await statusWith(server, bearer(await signToken({ ...claims, iss: "https://evil.example", aud: "meridian" })))).toBe(401);
  });
  it("D12 a wrong or missing audience is refused", async () => {
    expect(await statusWith(server, bearer(await signToken({ ...claims, iss: "https://idp.example", aud: "other" })))).toBe(401);
    expect(await statusWith(server, bearer(await signToken({ ...claims, iss: "https://idp.example" })))).toBe(401);
  });
});

describe("D12 JWKS file", () => {
  let server: TestServer;
  let privateKey: CryptoKey;
  const dir = mkdtempSync(join(tmpdir(), "meridian-jwks-"));
  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    const file = join(dir, "jwks.json");
    writeFileSync(file, JSON.stringify({ keys: [jwk] }));
    server = await startTestServer({ MERIDIAN_JWKS_FILE: file, MERIDIAN_JWT_SECRET: "" });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("D12 a token signed by a key of the JWKS is accepted", async () => {
    const token = await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("5m").sign(privateKey);
    expect(await statusWith(server, bearer(token))).not.toBe(401);
  });
  it("D12 an HS256 token is refused when only a JWKS is configured", async () => {
    expect(await statusWith(server, bearer(await signToken(claims)))).toBe(401);
  });
});

describe("D11 API keys", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("D11 a key reads mrd_<id>_<secret> and is accepted", async () => {
    const key = await server.key({ clientId: "k" });
    expect(key).toMatch(/^mrd_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(await statusWith(server, { "svc-open-api-key": key })).not.toBe(401);
  });

  it("D11 a key with a wrong secret, or malformed, is refused", async () => {
    const key = await server.key({ clientId: "k" });
    const wrong = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    expect(await statusWith(server, { "svc-open-api-key": wrong })).toBe(401);
    expect(await statusWith(server, { "svc-open-api-key": "not-a-key" })).toBe(401);
  });

  it("D11 only a hash of the secret is stored", async () => {
    const key = await server.key({ clientId: "hashcheck" });
    const secret = secretOf(key);
    const rows = await server.query("SELECT * FROM api_keys WHERE client_id = 'hashcheck'");
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0], (_k, v) => (v?.type === "Buffer" ? Buffer.from(v.data).toString("base64url") : v));
    expect(stored).not.toContain(secret);
  });
});
