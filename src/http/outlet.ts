// A streamed answer's way out, as the service that writes it may see it
// (D54): how many of its bytes wait in this process for the client to take
// them, and how to cut it. The request handler sets one for every
// server-streaming call.
import { createContextKey } from "@connectrpc/connect";
import { constants as h2, Http2ServerResponse } from "node:http2";
import type { NodeResponse } from "./node-types.js";

export interface Outlet {
  /** Bytes written and not yet taken by the client (still in this process: the response's and its socket's buffers). */
  queued(): number;
  /** Cuts the answer: the client sees a reset stream or a closed connection. */
  drop(): void;
}

export const outletKey = createContextKey<Outlet | undefined>(undefined, { description: "the streamed answer's outlet" });

export function outletOf(res: NodeResponse): Outlet {
  return {
    // HTTP/1.1: the response's own buffer and its socket's; HTTP/2: the stream's (what flow control holds back).
    queued: () => res.writableLength,
    // HTTP/2: RST_STREAM (CANCEL) at once; destroying the response would first wait on the data flow control holds.
    drop: () => (res instanceof Http2ServerResponse ? res.stream.close(h2.NGHTTP2_CANCEL) : res.destroy()),
  };
}
