// What the request log line needs from inside a call (D34): set by the auth
// interceptor, read by the logger when the response ends.
import { createContextKey } from "@connectrpc/connect";

export interface RequestInfo {
  /** W3C trace id of the request (D45): the caller's, or a new one. */
  traceId?: string;
  /** This server's span of that trace. */
  spanId?: string;
  clientId?: string;
  /** Body bytes of a streamed REST response handed to the socket (shows where a cut stream stopped). */
  streamedBytes?: number;
  /** The client left, cancelled or ran out of time before the call ended (D34: info, not an error). */
  cancelled?: boolean;
}

export const requestInfoKey = createContextKey<RequestInfo | undefined>(undefined, { description: "request info" });
