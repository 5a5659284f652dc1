// Meridian's public files. The REST API described (D41): GET /openapi.json,
// the OpenAPI 3.1 document (rest/openapi.ts, built once from the served
// routes), and GET /docs, a browsable reference of it by Swagger UI
// (swagger-ui-dist); the banner element at /ui/meridian-banner.js (D49); and the
// series explorer at /ui/explorer.html with uPlot, its chart library (issue 43).
// Every file under a strict Content-Security-Policy: no CDN, no inline script
// or style. Public, like the health check: the schema is not the data.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { assetFile } from "../runtime/assets.js";
import { isRead, sendJsonText } from "./http-io.js";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { STRICT_CSP, sendStaticFile } from "./static-files.js";
import { fileURLToPath } from "node:url";

/** Swagger UI's files, by the name they are served (and carried in the single executable) under. */
export function docsAssetFiles(): Record<string, string> {
  const dir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  return { "swagger-ui.css": join(dir, "swagger-ui.css"), "swagger-ui-bundle.js": join(dir, "swagger-ui-bundle.js") };
}

/** uPlot's files (issue 43: the explorer draws with it), by the name they are served and carried under. */
export function uplotAssetFiles(): Record<string, string> {
  const dir = join(dirname(createRequire(import.meta.url).resolve("uplot/package.json")), "dist");
  return { "uPlot.iife.min.js": join(dir, "uPlot.iife.min.js"), "uPlot.min.css": join(dir, "uPlot.min.css") };
}

export const DOCS_CSP = STRICT_CSP;

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

export class PublicFiles {
  private readonly json: string;
  private readonly index: string;

  constructor(document: object, info: { title: string; version: string }) {
    this.json = JSON.stringify(document);
    // GET /: what a person or a probe that found the port reads first, where the rest is.
    this.index = JSON.stringify({
      name: info.title,
      version: info.version,
      docs: "/docs",
      openapi: "/openapi.json",
      health: "/healthz",
      console: "/console",
    });
  }

  /** Answers the documentation's paths; false for any other request. */
  handle(req: NodeRequest, res: NodeResponse, path: string): boolean {
    if (!isRead(req)) return false;
    if (path === "/") {
      sendJsonText(res, 200, this.index, { "cache-control": "no-cache" });
      return true;
    }
    // Browsers ask for it on any page of the origin; no icon, and no 404 in the log for it.
    if (path === "/favicon.ico") {
      res.statusCode = 204;
      res.setHeader("cache-control", "max-age=86400");
      res.end();
      return true;
    }
    if (path === "/openapi.json") {
      sendJsonText(res, 200, this.json, { "cache-control": "no-cache" });
      return true;
    }
    if (path === "/docs" || path === "/docs/") return sendStaticFile(res, "html", Buffer.from(PAGE));
    if (path === "/docs/docs.js") return sendStaticFile(res, "js", Buffer.from(START));
    const ui = UI_FILES[path] as UiFile | undefined; // any path a client asks for
    if (ui)
      return sendStaticFile(
        res,
        ui.type,
        assetFile(ui.asset, () => uiFile(ui.asset)),
        ui.headers,
      );
    const lib = path.startsWith("/ui/uplot/") ? path.slice(10) : "";
    if (Object.hasOwn(UPLOT_ASSETS, lib))
      return sendStaticFile(
        res,
        lib.endsWith(".css") ? "css" : "js",
        assetFile(lib, () => uplotAssetFiles()[lib]),
      );
    const name = path.startsWith("/docs/") ? path.slice(6) : "";
    if (!Object.hasOwn(DOCS_ASSETS, name)) return false;
    // The package's path is asked only when run by node: the single executable has no package to resolve.
    return sendStaticFile(
      res,
      name.endsWith(".css") ? "css" : "js",
      assetFile(name, () => docsAssetFiles()[name]),
    );
  }
}

/** D49: the banner element and the operator console, files of the repository (ui/), served as they are. */
interface UiFile {
  asset: string;
  type: "html" | "js" | "css";
  headers?: Record<string, string>;
}

const UI_FILES: Record<string, UiFile> = {
  // Loaded as a module by other origins' pages: public, so any origin may.
  "/ui/meridian-banner.js": { asset: "meridian-banner.js", type: "js", headers: { "access-control-allow-origin": "*" } },
  // The console's page enforces Trusted Types: the banner's policy is its one HTML sink.
  "/console": {
    asset: "console.html",
    type: "html",
    headers: { "content-security-policy": `${STRICT_CSP}; require-trusted-types-for 'script'; trusted-types meridian-banner` },
  },
  // The console's pages' shared sign-in and look (the console, the explorer).
  "/ui/credential.js": { asset: "credential.js", type: "js" },
  "/ui/base.css": { asset: "base.css", type: "css" },
  "/ui/console.js": { asset: "console.js", type: "js" },
  "/ui/console.css": { asset: "console.css", type: "css" },
  // Issue 43: the page sets text only and uPlot draws on a canvas, so no policy at all may make HTML.
  "/ui/explorer.html": {
    asset: "explorer.html",
    type: "html",
    headers: { "content-security-policy": `${STRICT_CSP}; require-trusted-types-for 'script'; trusted-types 'none'` },
  },
  "/ui/explorer.js": { asset: "explorer.js", type: "js" },
  "/ui/explorer.css": { asset: "explorer.css", type: "css" },
};
// Same depth from src/ (tests) and dist/ (built): two levels below the package root.
const uiFile = (name: string) => join(dirname(fileURLToPath(import.meta.url)), "..", "..", "ui", name);

/** The files of the single executable's assets that this module serves, by asset name. */
export function servedAssetFiles(): Record<string, string> {
  return {
    ...docsAssetFiles(),
    ...uplotAssetFiles(),
    ...Object.fromEntries(Object.values(UI_FILES).map((f) => [f.asset, uiFile(f.asset)])),
  };
}

const DOCS_ASSETS = { "swagger-ui.css": true, "swagger-ui-bundle.js": true };
const UPLOT_ASSETS = { "uPlot.iife.min.js": true, "uPlot.min.css": true };
