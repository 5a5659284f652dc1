// meridian apikey create | list | revoke (D11, D33); each refuses a database that does not exist (D56).
import { keyIdOf } from "../auth/api-keys.js";
import { ROLES, SCOPES } from "../auth/principal.js";
import { parseCommand, UsageError } from "./args.js";
import { openCliBackend } from "./cli-database.js";

const KNOWN_SCOPES: readonly string[] = Object.values(SCOPES);
const KNOWN_ROLES: readonly string[] = Object.values(ROLES);

export const APIKEY_USAGE = `usage:
  meridian apikey create --client-id ID [--role R]... [--scope S]... [--project P]...
      prints a new API key on stdout (shown once); give at least one --role or --scope
      roles:    ${KNOWN_ROLES.join(", ")}
      scopes:   ${KNOWN_SCOPES.join(", ")}
      projects: time series project ids, or * for every project
  meridian apikey list [--json]
      lists live keys: id, client id, roles, scopes, projects, created
  meridian apikey revoke ID|KEY
      revokes a key, given its id or the whole key; it gets 401 from then on
`;

export async function apikeyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "create":
      return create(rest);
    case "list":
      return list(rest);
    case "revoke":
      return revoke(rest);
    case "--help":
    case "-h":
      process.stdout.write(APIKEY_USAGE);
      return 0;
    default:
      throw new UsageError(sub === undefined ? "expected create, list or revoke" : `unknown subcommand "${sub}"`, APIKEY_USAGE);
  }
}

async function create(argv: string[]): Promise<number> {
  const args = parseCommand(argv, APIKEY_USAGE, {
    "client-id": { type: "string" },
    role: { type: "string", multiple: true },
    scope: { type: "string", multiple: true },
    project: { type: "string", multiple: true },
  });
  if (!args) return 0;
  const { values } = args;
  const clientId = values["client-id"];
  if (!clientId) throw new UsageError("--client-id is required", APIKEY_USAGE);
  const roles = values.role ?? [];
  const scopes = values.scope ?? [];
  if (roles.length === 0 && scopes.length === 0)
    throw new UsageError("give at least one --role or --scope; a key with neither may call nothing", APIKEY_USAGE);
  for (const r of roles)
    if (!KNOWN_ROLES.includes(r)) throw new UsageError(`unknown role "${r}"; roles are ${KNOWN_ROLES.join(", ")}`, APIKEY_USAGE);
  for (const s of scopes)
    if (!KNOWN_SCOPES.includes(s)) throw new UsageError(`unknown scope "${s}"; scopes are ${KNOWN_SCOPES.join(", ")}`, APIKEY_USAGE);
  const backend = await openCliBackend("apikey create", "existing");
  try {
    const { id, key } = await backend.apiKeys.create({ clientId, roles, scopes, projects: values.project ?? [] });
    process.stdout.write(`${key}\n`);
    process.stderr.write(`created API key ${id} for client ${clientId}\n`);
    return 0;
  } finally {
    await backend.close();
  }
}

async function list(argv: string[]): Promise<number> {
  const args = parseCommand(argv, APIKEY_USAGE, { json: { type: "boolean" } });
  if (!args) return 0;
  const backend = await openCliBackend("apikey list", "existing");
  try {
    const keys = await backend.apiKeys.list();
    if (args.values.json) process.stdout.write(JSON.stringify(keys, null, 2) + "\n");
    else
      for (const k of keys) {
        process.stdout.write(
          [
            k.id,
            k.clientId,
            `roles=${k.roles.join(",")}`,
            `scopes=${k.scopes.join(",")}`,
            `projects=${k.projects.join(",")}`,
            k.createdAt,
          ].join("\t") + "\n",
        );
      }
    return 0;
  } finally {
    await backend.close();
  }
}

async function revoke(argv: string[]): Promise<number> {
  const args = parseCommand(argv, APIKEY_USAGE, {}, true);
  if (!args) return 0;
  if (args.positionals.length !== 1) throw new UsageError("expected one key id or key", APIKEY_USAGE);
  const id = keyIdOf(args.positionals[0]);
  if (!id) throw new UsageError("that is neither a key id (12 characters) nor a key (mrd_...)", APIKEY_USAGE);
  const backend = await openCliBackend("apikey revoke", "existing");
  try {
    if (!(await backend.apiKeys.revoke(id))) {
      process.stderr.write(`meridian apikey revoke: no live API key with id ${id}\n`);
      return 1;
    }
    process.stderr.write(`revoked API key ${id}\n`);
    return 0;
  } finally {
    await backend.close();
  }
}
