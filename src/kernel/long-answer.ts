// What a service answering with a long-lived stream (D54) may know of it,
// without HTTP: whose address it goes to (its watchers are counted per client
// address) and its outlet. The transport fills it for every server-streaming
// call, whatever the protocol.
import { createContextKey } from "@connectrpc/connect";

/** A streamed answer's way out: the bytes of it still waiting in this process for the client, and how to cut it. */
export interface Outlet {
  /** Bytes written and not yet taken by the client (still in this process: the response's and its socket's buffers). */
  queued(): number;
  /** Cuts the answer: the client sees a reset stream or a closed connection. */
  drop(): void;
}

export interface LongAnswer {
  /** The client's network address: the peer's, or X-Forwarded-For's when the peer is a trusted proxy. */
  clientAddress: string;
  outlet: Outlet;
}

export const longAnswerKey = createContextKey<LongAnswer | undefined>(undefined, { description: "the long-lived answer" });
