// D69: a REST body of a columnar media type, handed raw to the method whose
// route accepts it (the rest option `body_media_types`) beside the message
// the path builds: a context value, so that protobuf never copies it. The
// transport fills it; the method reads it without HTTP.
import { createContextKey } from "@connectrpc/connect";

export interface UploadBody {
  /** The Content-Type's type, lower case, parameters dropped. */
  mediaType: string;
  bytes: Uint8Array;
}

export const uploadBodyKey = createContextKey<UploadBody | undefined>(undefined, { description: "columnar upload body" });
