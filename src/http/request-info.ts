// What the request log line needs from inside a call (D34): set by the auth
// interceptor, read by the logger when the response ends.
import { createContextKey } from "@connectrpc/connect";
import type { Protocol } from "../metrics/metrics.js";

export interface RequestInfo {
  /** For the metrics (D43): the RPC ("Service/Method", or "unknown"), its protocol, and its Connect code once it ends. */
  method?: string;
  protocol?: Protocol;
  code?: string;
  /** An RPC's outcome as its answer told the client (D59), read when the answer ends; wins over `code`. */
  outcome?: () => string | undefined;
  /** W3C trace id of the request (D45): the caller's, or a new one. */
  traceId?: string;
  /** This server's span of that trace. */
  spanId?: string;
  clientId?: string;
  /** The client's network address (D54): the peer's, or X-Forwarded-For's when the peer is a trusted proxy. */
  clientAddress?: string;
  /** Body bytes of a streamed REST response handed to the socket (shows where a cut stream stopped). */
  streamedBytes?: number;
  /** Milliseconds spent checking the credentials (a key may be read from the database), counted against the call's wait limit (D40). */
  databaseWaitMs?: number;
  /** The client left, cancelled or ran out of time before the call ended (D34: info, not an error). */
  cancelled?: boolean;
}

export const requestInfoKey = createContextKey<RequestInfo | undefined>(undefined, { description: "request info" });
