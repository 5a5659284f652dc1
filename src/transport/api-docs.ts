// The REST API described (D41): GET /openapi.json, the OpenAPI 3.1 document
// (rest/openapi.ts, built once from the served routes), and GET /docs, a
// browsable reference of it by Swagger UI (swagger-ui-dist), every file
// served from here under a strict Content-Security-Policy: no CDN, no inline
// script or style. Public, like the health check: the schema is not the data.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { assetFile } from "../runtime/assets.js";
import { sendJsonText } from "./http-io.js";
import { writeHead, type NodeRequest, type NodeResponse } from "./node-types.js";

/** Swagger UI's files, by the name they are served (and carried in the single executable) under. */
export function docsAssetFiles(): Record<string, string> {
  const dir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  return { "swagger-ui.css": join(dir, "swagger-ui.css"), "swagger-ui-bundle.js": join(dir, "swagger-ui-bundle.js") };
}

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Meridian API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

// Our own start-up script, a file of its own (CSP: no inline script). "Try it out"
// sends requests from the page with the credentials entered under Authorize.
const START = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#ui", deepLinking: true, tryItOutEnabled: false });\n`;

const TYPES: Record<string, string> = { css: "text/css; charset=utf-8", js: "text/javascript; charset=utf-8", html: "text/html; charset=utf-8" };

export class ApiDocs {
  private readonly json: string;

  constructor(document: object) {
    this.json = JSON.stringify(document);
  }

  /** Answers the documentation's paths; false for any other request. */
  handle(req: NodeRequest, res: NodeResponse, path: string): boolean {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    if (path === "/openapi.json") {
      sendJsonText(res, 200, this.json, { "cache-control": "no-cache" });
      return true;
    }
    if (path === "/docs" || path === "/docs/") return this.file(res, "html", Buffer.from(PAGE));
    if (path === "/docs/docs.js") return this.file(res, "js", Buffer.from(START));
    const name = path.startsWith("/docs/") ? path.slice(6) : "";
    if (!Object.hasOwn(DOCS_ASSETS, name)) return false;
    // The package's path is asked only when run by node: the single executable has no package to resolve.
    return this.file(res, name.endsWith(".css") ? "css" : "js", assetFile(name, () => docsAssetFiles()[name]));
  }

  private file(res: NodeResponse, type: string, body: Buffer): true {
    writeHead(res, 200, {
      "content-type": TYPES[type],
      "content-length": String(body.length),
      "content-security-policy": DOCS_CSP,
      "x-content-type-options": "nosniff",
      "cache-control": type === "html" ? "no-cache" : "public, max-age=3600",
    });
    res.end(body);
    return true;
  }
}

const DOCS_ASSETS = { "swagger-ui.css": true, "swagger-ui-bundle.js": true };
