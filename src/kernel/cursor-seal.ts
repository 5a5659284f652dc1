// Opaque cursors: a payload and an HMAC over it and the listing it belongs to
// (its "binding"). A cursor used with another listing, tampered with, cut
// short or added to fails to open, so a client can neither forge nor reuse one elsewhere.
// Form: base64url(JSON payload) "#" base64url(MAC): the "#" is what D27 promises
// clients, and a client that forgets to URL-encode it sends a cut cursor.
import { createHmac, timingSafeEqual } from "node:crypto";

const MAC_BYTES = 16;

export class CursorSeal {
  constructor(private readonly key: Buffer) {}

  seal(binding: string, payload: unknown): string {
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}#${this.mac(binding, body).toString("base64url")}`;
  }

  /** The payload, or undefined for a cursor that is malformed or not of this binding. */
  open(binding: string, cursor: string): unknown {
    const at = cursor.lastIndexOf("#");
    if (at <= 0) return undefined;
    const body = cursor.slice(0, at);
    // The MAC compared as the text issued, not as decoded bytes: a base64 decoder skips junk
    // and ignores the last character's padding bits, so other texts would decode the same (D21).
    const given = Buffer.from(cursor.slice(at + 1), "latin1");
    const want = Buffer.from(this.mac(binding, body).toString("base64url"), "latin1");
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    try {
      return JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
  }

  private mac(binding: string, body: string): Buffer {
    return createHmac("sha256", this.key).update(binding).update("\0").update(body).digest().subarray(0, MAC_BYTES);
  }
}
