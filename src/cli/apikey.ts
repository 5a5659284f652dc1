// meridian apikey create | list | revoke (D11, D33); each refuses a database that does not exist (D56).
import { keyIdOf, type ApiKeyGrant } from "../auth/api-keys.js";
import { ROLES, SCOPES, type PublicKeyLimits } from "../auth/principal.js";
import { keyAudienceProblem, featureIdProblem } from "../auth/public-keys.js";
import { parseOrigin } from "../http/origins.js";
import { didYouMean } from "../config/nearest.js";
import { MAX_AUDIENCES } from "../kernel/audiences.js";
import { parseCommand, UsageError } from "./args.js";
import { openCliBackend } from "./cli-database.js";

const KNOWN_SCOPES: readonly string[] = Object.values(SCOPES);
const KNOWN_ROLES: readonly string[] = Object.values(ROLES);

export const APIKEY_USAGE = `usage:
  meridian apikey create --client-id ID [--role R]... [--scope S]... [--project P]... [--audience A]...
      prints a new API key on stdout (shown once); give at least one --role or --scope
      roles:    ${KNOWN_ROLES.join(", ")}
      scopes:   ${KNOWN_SCOPES.join(", ")}
      projects: time series project ids, or * for every project
  meridian apikey create --public --client-id ID --feature F... [--origin URL]... [--audience A]...
      a key for pages, safe to publish: it reads only the active messages and live
      streams of its features and the global ones; with --origin, only from pages of
      those origins (scheme://host[:port]); without, from any page
      audiences: what targeted messages are matched against
  meridian apikey list [--json]
      lists live keys: id, kind (public or private), client id, roles, scopes, projects,
      features, origins, audiences, created
  meridian apikey revoke ID|KEY
      revokes a key, given its id or the whole key; it gets 401 from then on
`;

export async function apikeyCommand(argv: string[]): Promise<number> {
  const sub = argv.at(0);
  const rest = argv.slice(1);
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
      throw new UsageError(
        sub === undefined
          ? "expected create, list or revoke"
          : `unknown subcommand "${sub}"${didYouMean(sub, ["create", "list", "revoke"])}`,
        APIKEY_USAGE,
      );
  }
}

async function create(argv: string[]): Promise<number> {
  const args = parseCommand(argv, APIKEY_USAGE, {
    "client-id": { type: "string" },
    role: { type: "string", multiple: true },
    scope: { type: "string", multiple: true },
    project: { type: "string", multiple: true },
    public: { type: "boolean" },
    feature: { type: "string", multiple: true },
    origin: { type: "string", multiple: true },
    audience: { type: "string", multiple: true },
  });
  if (!args) return 0;
  const { values } = args;
  const clientId = values["client-id"];
  if (!clientId) throw new UsageError("--client-id is required", APIKEY_USAGE);
  const grant: ApiKeyGrant = {
    clientId,
    roles: values.role ?? [],
    scopes: values.scope ?? [],
    projects: values.project ?? [],
    audiences: audiencesOf(values.audience ?? []),
  };
  if (values.public) grant.publicKey = publicLimits(values.feature ?? [], values.origin ?? [], grant);
  else {
    if (values.feature)
      throw new UsageError("--feature is for public keys: add --public (other keys read features by their client id)", APIKEY_USAGE);
    if (values.origin) throw new UsageError("--origin is for public keys: add --public", APIKEY_USAGE);
    privateGrantChecked(grant);
  }
  const backend = await openCliBackend("apikey create", "existing");
  try {
    const { id, key } = await backend.apiKeys.create(grant);
    process.stdout.write(`${key}\n`);
    process.stderr.write(`created ${grant.publicKey ? "public" : "private"} API key ${id} for client ${clientId}\n`);
    return 0;
  } finally {
    await backend.close();
  }
}

/** A private key's roles and scopes: at least one, each known (D13). */
function privateGrantChecked({ roles, scopes }: ApiKeyGrant): void {
  if (roles.length === 0 && scopes.length === 0)
    throw new UsageError("give at least one --role or --scope; a key with neither may call nothing", APIKEY_USAGE);
  for (const r of roles)
    if (!KNOWN_ROLES.includes(r)) throw new UsageError(`unknown role "${r}"; roles are ${KNOWN_ROLES.join(", ")}`, APIKEY_USAGE);
  for (const s of scopes)
    if (!KNOWN_SCOPES.includes(s)) throw new UsageError(`unknown scope "${s}"; scopes are ${KNOWN_SCOPES.join(", ")}`, APIKEY_USAGE);
}

/** D60: a public key's features (one at least) and origins, checked; it holds no role, scope or project. */
function publicLimits(features: string[], origins: string[], grant: ApiKeyGrant): PublicKeyLimits {
  if (grant.roles.length || grant.scopes.length || grant.projects.length)
    throw new UsageError("a --public key holds no --role, --scope or --project: what it may read is its --feature list", APIKEY_USAGE);
  if (features.length === 0)
    throw new UsageError("--public needs at least one --feature: the features whose messages it reads", APIKEY_USAGE);
  for (const f of features) {
    const problem = featureIdProblem(f);
    if (problem) throw new UsageError(`--feature ${problem}`, APIKEY_USAGE);
  }
  const parsed = origins.map((o) => {
    const p = parseOrigin(o);
    if ("error" in p) throw new UsageError(`--origin ${p.error}`, APIKEY_USAGE);
    return p.origin;
  });
  return { features: [...new Set(features)], origins: [...new Set(parsed)] };
}

/** D61: a key's audiences, checked. */
function audiencesOf(audiences: string[]): string[] {
  for (const a of audiences) {
    const problem = keyAudienceProblem(a);
    if (problem) throw new UsageError(`--audience ${problem}`, APIKEY_USAGE);
  }
  const unique = [...new Set(audiences)];
  if (unique.length > MAX_AUDIENCES) throw new UsageError(`at most ${MAX_AUDIENCES} --audience values`, APIKEY_USAGE);
  return unique;
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
            k.kind,
            k.clientId,
            `roles=${k.roles.join(",")}`,
            `scopes=${k.scopes.join(",")}`,
            `projects=${k.projects.join(",")}`,
            `features=${k.publicKey?.features.join(",") ?? ""}`,
            `origins=${k.publicKey ? k.publicKey.origins.join(",") || "*" : ""}`,
            `audiences=${(k.audiences ?? []).join(",")}`,
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
