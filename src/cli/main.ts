// meridian serve | apikey create|list|revoke | --help. What a command creates
// goes alone to stdout; logs and messages go to stderr (D33).
import { parseArgs } from "node:util";
import { startMeridian, VERSION } from "../app.js";
import { ApiKeyStore } from "../auth/api-keys.js";
import { SETTINGS, SettingError, flagOf, loadSettings, settingsHelp } from "../config/settings.js";
import { openDatabase } from "../storage/database.js";
import { ImportError, importCsv } from "../timeseries/csv-import.js";
import { missingNodeFlags } from "./node-flags.js";
import { progressBar } from "./progress.js";

const USAGE = `Meridian ${VERSION}: feature status messages and time series over gRPC, Connect and JSON.

Usage:
  meridian serve [flags]                 serve the API (npm start)
  meridian apikey create --client-id ID [--role R]... [--scope S]... [--project P]...
                                         print a new API key (shown once)
  meridian apikey list [--json]          list keys: id, client id, roles, scopes, projects, created
  meridian apikey revoke ID              revoke a key; it gets 401 from then on
  meridian import --dataset ID --series ID FILE.csv
                                         load a CSV (timestamp, one column per data field) into a
                                         time series, all or nothing; prints a summary line
  meridian --help                        this text

Settings (environment variable, or the flag on serve; the flag wins):
${settingsHelp()}
`;

export async function main(argv: string[]): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case "serve":
        return await serve(rest);
      case "apikey":
        return apikey(rest);
      case "import":
        return await importCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      case "--version":
        process.stdout.write(`${VERSION}\n`);
        return 0;
      default:
        process.stderr.write(`meridian: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof SettingError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`meridian: ${(e as Error).message}\n`);
      return 2;
    }
    throw e;
  }
}

async function serve(argv: string[]): Promise<number> {
  const options = Object.fromEntries(SETTINGS.map((s) => [flagOf(s.env), { type: "string" as const }]));
  const { values } = parseArgs({ args: argv, options, strict: true });
  // Listen for signals before serving: a SIGTERM right after start-up must drain, not kill.
  const signal = new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  const app = await startMeridian(loadSettings(process.env, values as Record<string, string | undefined>));
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    app.logger.warn({ missing }, `node was started without ${missing.join(" ")}: expect frequent full garbage collections under load; run bin/meridian.js itself, or node ${missing.join(" ")} bin/meridian.js serve`);
  }
  app.logger.info({ signal: await signal }, "draining");
  await app.close();
  return 0;
}

function apikey(argv: string[]): number {
  const [sub, ...rest] = argv;
  const db = openDatabase(loadSettings().db);
  try {
    const store = new ApiKeyStore(db);
    if (sub === "create") {
      const { values } = parseArgs({
        args: rest,
        strict: true,
        options: {
          "client-id": { type: "string" },
          role: { type: "string", multiple: true },
          scope: { type: "string", multiple: true },
          project: { type: "string", multiple: true },
        },
      });
      const clientId = values["client-id"];
      if (!clientId) {
        process.stderr.write("meridian apikey create: --client-id is required\n");
        return 2;
      }
      const { id, key } = store.create({ clientId, roles: values.role ?? [], scopes: values.scope ?? [], projects: values.project ?? [] });
      process.stdout.write(`${key}\n`);
      process.stderr.write(`created API key ${id} for client ${clientId}\n`);
      return 0;
    }
    if (sub === "list") {
      const { values } = parseArgs({ args: rest, strict: true, options: { json: { type: "boolean" } } });
      const keys = store.list();
      if (values.json) process.stdout.write(JSON.stringify(keys, null, 2) + "\n");
      else for (const k of keys) {
        process.stdout.write([k.id, k.clientId, `roles=${k.roles.join(",")}`, `scopes=${k.scopes.join(",")}`, `projects=${k.projects.join(",")}`, k.createdAt].join("\t") + "\n");
      }
      return 0;
    }
    if (sub === "revoke") {
      const { positionals } = parseArgs({ args: rest, strict: true, allowPositionals: true });
      if (positionals.length !== 1) {
        process.stderr.write("usage: meridian apikey revoke ID\n");
        return 2;
      }
      if (!store.revoke(positionals[0])) {
        process.stderr.write(`meridian: no live API key with id ${positionals[0]}\n`);
        return 1;
      }
      process.stderr.write(`revoked API key ${positionals[0]}\n`);
      return 0;
    }
    process.stderr.write(`meridian apikey: expected create, list or revoke\n`);
    return 2;
  } finally {
    db.close();
  }
}

async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { dataset: { type: "string" }, series: { type: "string" } },
  });
  if (!values.dataset || !values.series || positionals.length !== 1) {
    process.stderr.write("usage: meridian import --dataset ID --series ID FILE.csv\n");
    return 2;
  }
  const db = openDatabase(loadSettings().db);
  const bar = process.stderr.isTTY ? progressBar(process.stderr) : undefined;
  const started = performance.now();
  try {
    const { rows } = await importCsv(db, { datasetId: values.dataset, seriesId: values.series, file: positionals[0], onProgress: bar?.update });
    bar?.done();
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`imported ${rows} rows into time series ${values.series} in ${seconds.toFixed(2)} s (${Math.round(rows / seconds)} rows/s)\n`);
    return 0;
  } catch (e) {
    bar?.done();
    if (e instanceof ImportError || (e as { code?: string }).code === "ENOENT") {
      process.stderr.write(`meridian import: ${(e as Error).message}; nothing was imported\n`);
      return 1;
    }
    throw e;
  } finally {
    db.close();
  }
}
