// A streamed answer's way out over HTTP (D54): how many of its bytes wait in
// this process for the client to take them, and how to cut it. The request
// handler makes one for every server-streaming call (kernel/long-answer.ts).
import { constants as h2, Http2ServerResponse } from "node:http2";
import type { Outlet } from "../kernel/long-answer.js";
import type { NodeResponse } from "./node-types.js";

export function outletOf(res: NodeResponse): Outlet {
  return {
    // HTTP/1.1: the response's own buffer and its socket's; HTTP/2: the stream's (what flow control holds back).
    queued: () => res.writableLength,
    // HTTP/2: RST_STREAM (CANCEL) at once; destroying the response would first wait on the data flow control holds.
    drop: () => (res instanceof Http2ServerResponse ? res.stream.close(h2.NGHTTP2_CANCEL) : res.destroy()),
  };
}
