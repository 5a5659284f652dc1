// Every setting once: its environment variable, its flag on `meridian serve`,
// its default and its help line (D31). Flags win over the environment.
import { ClientAddress } from "../http/client-address.js";
import { parseOrigin } from "../http/origins.js";
import { nearestOf } from "./nearest.js";
import { OperatorError } from "./operator-error.js";

// Who may scrape /metrics (D43): MERIDIAN_METRICS is `off`, `public` (on the
// API's port, without credentials), or [host:]port of a listener of its own
// (default 127.0.0.1:9464, reachable from the machine only).
export type MetricsExposure = { kind: "off" } | { kind: "public" } | { kind: "own"; host: string; port: number };

export function parseMetricsSetting(text: string): MetricsExposure | undefined {
  const t = text.trim().toLowerCase();
  if (t === "off" || t === "public") return { kind: t };
  const m = /^(?:([^:]+|\[[0-9a-f:]+\]):)?(\d{1,5})$/.exec(t);
  if (!m || Number(m[2]) > 65535) return undefined;
  const [, host = "127.0.0.1", port] = m; // the host's group is optional
  return { kind: "own", host: host.replace(/^\[|\]$/g, ""), port: Number(port) };
}

export interface Settings {
  port: number;
  host: string;
  db: string;
  dbListen: string;
  dbRead: string;
  dbReadWaitMs: number;
  tlsCert: string;
  tlsKey: string;
  jwtSecret: string;
  jwksFile: string;
  jwtIssuer: string;
  jwtAudience: string;
  corsOrigins: string[];
  corsHeaders: string[];
  metrics: MetricsExposure;
  cleanupIntervalS: number;
  messageRetentionDays: number;
  allowHttpLinks: boolean;
  webhookHttpHosts: string[];
  webhookHosts: string[];
  listingCacheMb: number;
  blockCacheMb: number;
  maxWatchers: number;
  maxWatchersPerClient: number;
  watcherQueueKb: number;
  trustedProxies: string[];
  h2MaxStreams: number;
  auditRetentionDays: number;
  sseHeartbeatS: number;
  idleTimeoutS: number;
  headersTimeoutS: number;
  requestTimeoutS: number;
  pgPool: number;
  pgStatementTimeoutMs: number;
  pgConnectTimeoutS: number;
  logLevel: string;
  /** The settings the operator gave, by flag or environment variable (their variables' names); the others hold defaults. */
  given: ReadonlySet<string>;
}

interface Spec<K extends keyof Settings> {
  key: K;
  env: string;
  default: string;
  help: string;
  parse: (text: string, name: string) => Settings[K];
}

const int = (min: number, max: number) => (text: string, name: string) => {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max) throw new OperatorError(name, text, `must be an integer from ${min} to ${max}`, "");
  return n;
};
const str = (text: string) => text;
const bool = (text: string, name: string) => {
  const t = text.trim().toLowerCase();
  if (t === "true" || t === "1") return true;
  if (t === "false" || t === "0" || t === "") return false;
  throw new OperatorError(name, text, "must be true or false", "");
};
const metricsSetting = (text: string, name: string) => {
  const m = parseMetricsSetting(text);
  if (!m) throw new OperatorError(name, text, "must be off, public, or [host:]port", "");
  return m;
};
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];
const logLevel = (text: string, name: string) => {
  const t = text.trim().toLowerCase();
  if (!LOG_LEVELS.includes(t)) throw new OperatorError(name, text, `is not a log level; the levels are ${LOG_LEVELS.join(", ")}`, "");
  return t;
};
/** A SQLite file path or a PostgreSQL URL (D40, D56): a URL of any other scheme is a mistake, not a folder named "mysql:". */
const database = (text: string, name: string) => {
  if (text.trim() === "") throw new OperatorError(name, text, "is empty", "set it to a SQLite file path or a postgres:// URL");
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1];
  if (scheme && !/^postgres(ql)?$/i.test(scheme)) {
    throw new OperatorError(name, text, `Meridian cannot use a ${scheme}: database`, "set it to a SQLite file path or a postgres:// URL");
  }
  return text;
};
/** An optional PostgreSQL URL (D70, D71): empty, or postgres://. */
const postgresUrl = (text: string, name: string) => {
  if (text.trim() !== "" && !/^postgres(ql)?:\/\//i.test(text)) {
    throw new OperatorError(name, text, "is not a postgres:// URL", `set ${name} to a postgres:// URL, or leave it empty`);
  }
  return text.trim();
};
const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
/** Host names or addresses, separated by commas or spaces; an IPv6 address with or without its brackets. */
const hostList = (text: string) => text.split(/[\s,]+/).filter(Boolean);
/** D36: each entry an origin as browsers send it; one that could never match (a path, a trailing slash, upper case) is refused. */
const origins = (text: string, name: string) =>
  list(text).map((entry) => {
    const o = parseOrigin(entry);
    if ("error" in o) throw new OperatorError(name, text, o.error, `set ${name} to origins, comma separated`);
    return o.origin;
  });
const addresses = (text: string, name: string) => {
  const entries = list(text);
  try {
    new ClientAddress(entries);
  } catch (e) {
    throw new OperatorError(name, text, (e as Error).message, "");
  }
  return entries;
};

type AnySpec = { [K in keyof Settings]: Spec<K> }[keyof Settings];

export const SETTINGS: readonly AnySpec[] = [
  { key: "port", env: "MERIDIAN_PORT", default: "8080", help: "TCP port (0 picks a free one)", parse: int(0, 65535) },
  { key: "host", env: "MERIDIAN_HOST", default: "127.0.0.1", help: "interface to listen on (0.0.0.0 to expose)", parse: str },
  { key: "db", env: "MERIDIAN_DB", default: "./data/meridian.db", help: "SQLite database file, or a postgres:// URL", parse: database },
  {
    key: "dbListen",
    env: "MERIDIAN_DB_LISTEN",
    default: "",
    help: "PostgreSQL URL for LISTEN (the change feed) when MERIDIAN_DB goes through a transaction pooler; empty: MERIDIAN_DB",
    parse: postgresUrl,
  },
  {
    key: "dbRead",
    env: "MERIDIAN_DB_READ",
    default: "",
    help: "PostgreSQL URL of the standbys that serve listings and values; empty: every read from MERIDIAN_DB",
    parse: postgresUrl,
  },
  {
    key: "dbReadWaitMs",
    env: "MERIDIAN_DB_READ_WAIT_MS",
    default: "200",
    help: "milliseconds a read waits for a standby to replay every write committed before it began; then it reads from the primary",
    parse: int(0, 60_000),
  },
  { key: "tlsCert", env: "MERIDIAN_TLS_CERT", default: "", help: "PEM certificate file; with the key, serves TLS", parse: str },
  { key: "tlsKey", env: "MERIDIAN_TLS_KEY", default: "", help: "PEM private key file", parse: str },
  { key: "jwtSecret", env: "MERIDIAN_JWT_SECRET", default: "", help: "HS256 secret for bearer tokens (UTF-8 bytes)", parse: str },
  { key: "jwksFile", env: "MERIDIAN_JWKS_FILE", default: "", help: "public JWKS file for bearer tokens", parse: str },
  { key: "jwtIssuer", env: "MERIDIAN_JWT_ISSUER", default: "", help: "required token issuer (iss), if set", parse: str },
  { key: "jwtAudience", env: "MERIDIAN_JWT_AUDIENCE", default: "", help: "required token audience (aud), if set", parse: str },
  {
    key: "corsOrigins",
    env: "MERIDIAN_CORS_ORIGINS",
    default: "",
    help: "browser origins allowed to call (scheme://host[:port]), comma separated",
    parse: origins,
  },
  {
    key: "corsHeaders",
    env: "MERIDIAN_CORS_HEADERS",
    default: "",
    help: "more request headers browsers may send, comma separated",
    parse: list,
  },
  {
    key: "metrics",
    env: "MERIDIAN_METRICS",
    default: "127.0.0.1:9464",
    help: "who may scrape /metrics: off, public (this port), or [host:]port of its own",
    parse: metricsSetting,
  },
  {
    key: "cleanupIntervalS",
    env: "MERIDIAN_CLEANUP_INTERVAL_S",
    default: "3600",
    help: "seconds between expired-message cleanups",
    parse: int(1, 31_536_000),
  },
  {
    key: "messageRetentionDays",
    env: "MERIDIAN_MESSAGE_RETENTION_DAYS",
    default: "30",
    help: "days an expired message is kept",
    parse: int(0, 36_500),
  },
  { key: "allowHttpLinks", env: "MERIDIAN_ALLOW_HTTP_LINKS", default: "false", help: "keep http: links in message bodies", parse: bool },
  {
    key: "webhookHttpHosts",
    env: "MERIDIAN_WEBHOOK_HTTP_HOSTS",
    default: "",
    help: "hosts a webhook may reach over plain http:, comma separated (others need https:); they may be internal too",
    parse: hostList,
  },
  {
    key: "webhookHosts",
    env: "MERIDIAN_WEBHOOK_HOSTS",
    default: "",
    help: "hosts a webhook may reach although internal (loopback, private, link-local...), separated by commas or spaces",
    parse: hostList,
  },
  {
    key: "listingCacheMb",
    env: "MERIDIAN_LISTING_CACHE_MB",
    default: "32",
    help: "megabytes of message listings kept in memory (0 keeps none)",
    parse: int(0, 4096),
  },
  {
    key: "blockCacheMb",
    env: "MERIDIAN_BLOCK_CACHE_MB",
    default: "256",
    help: "megabytes of hot value blocks and their summaries kept in memory for chart reads (0 keeps none)",
    parse: int(0, 65_536),
  },
  {
    key: "auditRetentionDays",
    env: "MERIDIAN_AUDIT_RETENTION_DAYS",
    default: "365",
    help: "days an entry of the messages' audit trail is kept",
    parse: int(0, 36_500),
  },
  {
    key: "maxWatchers",
    env: "MERIDIAN_MAX_WATCHERS",
    default: "10000",
    help: "message watchers (SSE and WatchMessages streams) one process serves at once; beyond, 503",
    parse: int(0, 1_000_000),
  },
  {
    key: "maxWatchersPerClient",
    env: "MERIDIAN_MAX_WATCHERS_PER_CLIENT",
    default: "100",
    help: "message watchers one credential may hold from one address; beyond, 429",
    parse: int(1, 1_000_000),
  },
  {
    key: "watcherQueueKb",
    env: "MERIDIAN_WATCHER_QUEUE_KB",
    default: "256",
    help: "kilobytes a watcher that does not read may leave waiting before it is dropped",
    parse: int(16, 1_048_576),
  },
  {
    key: "trustedProxies",
    env: "MERIDIAN_TRUSTED_PROXIES",
    default: "",
    help: "proxies' addresses or CIDR ranges whose X-Forwarded-For names the client, comma separated",
    parse: addresses,
  },
  {
    key: "h2MaxStreams",
    env: "MERIDIAN_H2_MAX_STREAMS",
    default: "100",
    help: "concurrent streams one HTTP/2 connection may open",
    parse: int(1, 1_000_000),
  },
  {
    key: "sseHeartbeatS",
    env: "MERIDIAN_SSE_HEARTBEAT_S",
    default: "15",
    help: "seconds between heartbeat comments on a quiet message stream",
    parse: int(1, 3600),
  },
  {
    key: "idleTimeoutS",
    env: "MERIDIAN_IDLE_TIMEOUT_S",
    default: "65",
    help: "seconds a connection may stay open with no request in progress",
    parse: int(1, 86_400),
  },
  {
    key: "headersTimeoutS",
    env: "MERIDIAN_HEADERS_TIMEOUT_S",
    default: "20",
    help: "seconds a client has to connect fully and send a request's headers",
    parse: int(1, 3600),
  },
  {
    key: "requestTimeoutS",
    env: "MERIDIAN_REQUEST_TIMEOUT_S",
    default: "300",
    help: "seconds a client has to send a whole request, body included",
    parse: int(1, 86_400),
  },
  { key: "pgPool", env: "MERIDIAN_PG_POOL", default: "10", help: "PostgreSQL connections per process", parse: int(1, 1000) },
  {
    key: "pgStatementTimeoutMs",
    env: "MERIDIAN_PG_STATEMENT_TIMEOUT_MS",
    default: "5000",
    help: "milliseconds a PostgreSQL statement may run before it is cancelled (503)",
    parse: int(100, 3_600_000),
  },
  {
    key: "pgConnectTimeoutS",
    env: "MERIDIAN_PG_CONNECT_TIMEOUT_S",
    default: "5",
    help: "seconds a PostgreSQL connection attempt may take; a request waits at most this plus the statement timeout, then is a 503",
    parse: int(1, 600),
  },
  {
    key: "logLevel",
    env: "MERIDIAN_LOG_LEVEL",
    default: "info",
    help: `${LOG_LEVELS.join(", ")}; debug also prints the stack of a start-up failure`,
    parse: logLevel,
  },
];

/**
 * The variables the code reads besides SETTINGS (they have no flag on serve).
 * MERIDIAN_TEST_* are the test suite's. A test checks that every MERIDIAN_
 * name in src/, bin/, release/ and native/ is one of these or a setting.
 */
export const OTHER_VARIABLES: readonly { env: string; help?: string }[] = [
  {
    env: "MERIDIAN_CACHE_DIR",
    help: "where the single executable unpacks its native addons (default $XDG_CACHE_HOME/meridian or ~/.cache/meridian)",
  },
  { env: "MERIDIAN_NATIVE_ADDON" }, // native/check.sh: a sanitizer build of the addon
  { env: "MERIDIAN_NATIVE_PORTABLE" }, // native/check.sh: the addon's paths without SSE4.2
  { env: "MERIDIAN_DEBIAN_MIRROR" }, // release/image.mjs: where the image's Debian comes from
];

/** MERIDIAN_* variables of `env` that Meridian does not read, each with the known name nearest to it (D56). */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): { name: string; nearest: string }[] {
  const known = [...SETTINGS.map((s) => s.env), ...OTHER_VARIABLES.map((v) => v.env)];
  return Object.keys(env)
    .filter((name) => name.startsWith("MERIDIAN_") && !name.startsWith("MERIDIAN_TEST_") && !known.includes(name))
    .sort()
    .map((name) => ({ name, nearest: nearestOf(name, known) }));
}

/** The warning for an unknown variable, the same from serve's log and the other commands. */
export function unknownVariableWarning(u: { name: string; nearest: string }): string {
  return `${u.name} is not a Meridian setting and is ignored; did you mean ${u.nearest}?`;
}

/** The flag of a setting: MERIDIAN_CLEANUP_INTERVAL_S -> --cleanup-interval-s. */
export function flagOf(env: string): string {
  return env
    .replace(/^MERIDIAN_/, "")
    .toLowerCase()
    .replace(/_/g, "-");
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env, flags: Record<string, string | undefined> = {}): Settings {
  const out: Partial<Record<keyof Settings, unknown>> = {};
  const given = new Set<string>();
  for (const spec of SETTINGS) {
    const flag = flags[flagOf(spec.env)];
    const text = flag ?? env[spec.env] ?? spec.default;
    if (flag !== undefined || env[spec.env] !== undefined) given.add(spec.env);
    out[spec.key] = spec.parse(text, flag !== undefined ? `--${flagOf(spec.env)}` : spec.env);
  }
  out.given = given;
  const s = out as Settings;
  if (Boolean(s.tlsCert) !== Boolean(s.tlsKey)) {
    const [set, unset] = s.tlsCert ? ["MERIDIAN_TLS_CERT", "MERIDIAN_TLS_KEY"] : ["MERIDIAN_TLS_KEY", "MERIDIAN_TLS_CERT"];
    throw new OperatorError(set, s.tlsCert || s.tlsKey, `is set without ${unset}`, "set both (TLS) or neither");
  }
  // D71: the standbys must serve the same database, or reads would show another one's rows.
  const dbName = (url: string) => /^[a-z]+:\/\/[^/?#]*\/([^?#]*)/i.exec(url)?.[1] ?? "";
  if (s.dbRead && (!/^postgres(ql)?:\/\//i.test(s.db) || dbName(s.dbRead) !== dbName(s.db))) {
    throw new OperatorError(
      "MERIDIAN_DB_READ",
      s.dbRead,
      /^postgres(ql)?:\/\//i.test(s.db)
        ? `names database "${dbName(s.dbRead)}", MERIDIAN_DB "${dbName(s.db)}"`
        : "is set, but MERIDIAN_DB is not a PostgreSQL URL",
      "name the same database on the standbys as in MERIDIAN_DB",
    );
  }
  return s;
}

export function settingsHelp(): string {
  const rows = SETTINGS.map((s) => [`--${flagOf(s.env)}`, s.env, s.default === "" ? "(none)" : s.default, s.help]);
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
  const settings = rows.map((r) => `  ${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`);
  const others = OTHER_VARIABLES.filter((v) => v.help).map((v) => `  ${v.env}  ${v.help}`);
  return [...settings, "", "Other environment variables (no flag):", ...others].join("\n");
}
