// meridian webhook add | list | remove (D63): the same registrations as the
// API's, on the database of MERIDIAN_DB; each refuses one that does not exist (D56).
import { randomBytes } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { loadSettings } from "../config/settings.js";
import { newWebhook, WEBHOOK_EVENTS } from "../featurestatus/webhooks/webhooks.js";
import { WebhookHosts } from "../featurestatus/webhooks/webhook-addresses.js";
import { parseCommand, UsageError } from "./args.js";
import { openCliBackend } from "./cli-database.js";

export const WEBHOOK_USAGE = `usage:
  meridian webhook add --url URL [--secret S] [--event E]...
      registers an endpoint told of message changes (https:, or http: for hosts in
      MERIDIAN_WEBHOOK_HTTP_HOSTS; an internal address or localhost only for hosts in
      MERIDIAN_WEBHOOK_HOSTS); prints its signing secret on stdout (made when not given)
      events: ${WEBHOOK_EVENTS.join(", ")} (all when none is given)
  meridian webhook list [--json]
      lists endpoints: id, url, events, created (never their secrets)
  meridian webhook remove ID
      removes an endpoint and its undelivered events
`;

export async function webhookCommand(argv: string[]): Promise<number> {
  const sub = argv.at(0); // none when the command stops at "webhook"
  const rest = argv.slice(1);
  switch (sub) {
    case "add":
      return add(rest);
    case "list":
      return list(rest);
    case "remove":
      return remove(rest);
    case "--help":
    case "-h":
      process.stdout.write(WEBHOOK_USAGE);
      return 0;
    default:
      throw new UsageError(sub === undefined ? "expected add, list or remove" : `unknown subcommand "${sub}"`, WEBHOOK_USAGE);
  }
}

async function add(argv: string[]): Promise<number> {
  const args = parseCommand(argv, WEBHOOK_USAGE, {
    url: { type: "string" },
    secret: { type: "string" },
    event: { type: "string", multiple: true },
  });
  if (!args) return 0;
  const { values } = args;
  if (!values.url) throw new UsageError("--url is required", WEBHOOK_USAGE);
  const secret = values.secret ?? randomBytes(32).toString("base64url");
  let row;
  try {
    const settings = loadSettings();
    const hosts = new WebhookHosts({ hosts: settings.webhookHosts, httpHosts: settings.webhookHttpHosts });
    row = newWebhook({ url: values.url, secret, events: values.event ?? [] }, hosts);
  } catch (e) {
    if (e instanceof ConnectError) throw new UsageError(e.rawMessage, WEBHOOK_USAGE);
    throw e;
  }
  const backend = await openCliBackend("webhook add", "existing");
  try {
    await backend.webhooks.create(row);
    process.stdout.write(`${secret}\n`);
    process.stderr.write(`added webhook ${row.id} for ${row.url} (${row.events.split(" ").join(", ")})\n`);
    return 0;
  } finally {
    await backend.close();
  }
}

async function list(argv: string[]): Promise<number> {
  const args = parseCommand(argv, WEBHOOK_USAGE, { json: { type: "boolean" } });
  if (!args) return 0;
  const backend = await openCliBackend("webhook list", "existing");
  try {
    const hooks = (await backend.webhooks.list()).map((w) => ({
      id: w.id,
      url: w.url,
      events: w.events.split(" "),
      createdAt: new Date(w.created_at).toISOString(),
    }));
    if (args.values.json) process.stdout.write(JSON.stringify(hooks, null, 2) + "\n");
    else for (const w of hooks) process.stdout.write([w.id, w.url, w.events.join(","), w.createdAt].join("\t") + "\n");
    return 0;
  } finally {
    await backend.close();
  }
}

async function remove(argv: string[]): Promise<number> {
  const args = parseCommand(argv, WEBHOOK_USAGE, {}, true);
  if (!args) return 0;
  if (args.positionals.length !== 1) throw new UsageError("expected one webhook id", WEBHOOK_USAGE);
  const id = args.positionals[0];
  const backend = await openCliBackend("webhook remove", "existing");
  try {
    if (!(await backend.webhooks.remove(id))) {
      process.stderr.write(`meridian webhook remove: no webhook with id ${id}\n`);
      return 1;
    }
    process.stderr.write(`removed webhook ${id}\n`);
    return 0;
  } finally {
    await backend.close();
  }
}
