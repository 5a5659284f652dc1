// Browser origins as the operator writes them (D36 MERIDIAN_CORS_ORIGINS, D60
// public keys' --origin): compared byte for byte with the Origin header, so
// an entry not written exactly as browsers send it would never match.
/**
 * A URL origin as a browser sends it (`scheme://host[:port]`, lower case, no
 * default port, no path), or why `text` is not one.
 */
export function parseOrigin(text: string): { origin: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `"${text}" is not a URL origin; write scheme://host[:port], such as https://shop.example` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { error: `"${text}" is not an http or https origin` };
  if (url.origin === text) return { origin: text };
  const extra = url.username || url.password ? "a user name" : url.search || url.hash || url.pathname !== "/" ? "a path" : "";
  return {
    error: extra
      ? `"${text}" has ${extra}; an origin is scheme://host[:port] alone: ${url.origin}`
      : `"${text}" is not written as browsers send it; write ${url.origin}`,
  };
}
