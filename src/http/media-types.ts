// Media types the service answers with and accepts, named once for every layer
// that writes a body (transport's REST side, the reads that answer JSON).

/** What JSON answers are sent as. */
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** An Arrow IPC stream, as an upload's body (D69). */
export const ARROW_STREAM_MEDIA_TYPE = "application/vnd.apache.arrow.stream";

/** A Parquet answer (D64): sent without Content-Encoding, as its pages are compressed already. */
export const PARQUET_MEDIA_TYPE = "application/vnd.apache.parquet";

/** application/json, text/json and any application/*+json, parameters ignored (D6). */
export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(";", 1)[0].trim().toLowerCase();
  return type === "application/json" || type === "text/json" || (type.startsWith("application/") && type.endsWith("+json"));
}
