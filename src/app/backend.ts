// Where Meridian keeps its data (D40): a SQLite file (the default, embedded)
// or a PostgreSQL database shared by replicas, chosen by MERIDIAN_DB. The
// rest of the code sees the stores and these few operations, not which.
import type { ApiKeyStore } from "../auth/api-keys.js";
import { SqliteApiKeyStore } from "../sqlite/api-key-store.js";
import { PostgresApiKeyStore } from "../postgres/api-key-store.js";
import type { Settings } from "../config/settings.js";
import type { MessageStore } from "../featurestatus/messages/message-store.js";
import type { MessageTransactions } from "../featurestatus/messages/message-transactions.js";
import { SqliteMessageStore } from "../sqlite/message-store.js";
import { PostgresMessageStore } from "../postgres/message-store.js";
import type { DismissalStore } from "../featurestatus/messages/dismissals.js";
import { SqliteDismissalStore } from "../sqlite/dismissal-store.js";
import { PostgresDismissalStore } from "../postgres/dismissal-store.js";
import type { WebhookStore } from "../featurestatus/webhooks/webhooks.js";
import { SqliteWebhookStore } from "../sqlite/webhook-store.js";
import { PostgresWebhookStore } from "../postgres/webhook-store.js";
import type { Logger } from "../log/logger.js";
import type { BlockStore } from "../timeseries/blocks/block-store.js";
import { SqliteBlockStore } from "../sqlite/block-store.js";
import { PG_SERIES_BLOCKS, PostgresBlockStore } from "../postgres/block-store.js";
import type { MetadataStore } from "../timeseries/metadata-store.js";
import { SqliteMetadataStore } from "../sqlite/metadata-store.js";
import { PostgresMetadataStore } from "../postgres/metadata-store.js";
import type { Imports } from "../timeseries/import/staging.js";
import { SqliteImports } from "../sqlite/import-staging.js";
import { PostgresImports, discardAbandonedPgImports } from "../postgres/import-staging.js";
import { startCheckpoints } from "../sqlite/checkpoint.js";
import { boundPageCache, neverWaitForLocks, openDatabase, type Db } from "../sqlite/database.js";
import { prepareDatabaseFile, type Creation } from "../sqlite/database-file.js";
import { ChangeFeed } from "../postgres/changes.js";
import { connectPostgres, displayUrl, isPostgresUrl, type Sql } from "../postgres/database.js";
import { ReadRouter } from "../postgres/read-routing.js";
import { isTransientPgError } from "../postgres/errors.js";
import { oncePerInterval } from "../postgres/jobs.js";
import { pgGroupCommit } from "../postgres/group-commit.js";
import { groupCommit } from "../sqlite/group-commit.js";
import { WalSync } from "../sqlite/wal-sync.js";
import { PG_MIGRATIONS, migratePostgres } from "../postgres/schema.js";
import { pgServerSecret } from "../postgres/server-secrets.js";
import { serverSecret } from "../sqlite/server-secrets.js";

export interface Backend {
  kind: "sqlite" | "postgres";
  /** The database, for logs: a file path, or a URL without its password. */
  where: string;
  /** This open made a new, empty database (a SQLite file, or the tables in an empty PostgreSQL database). */
  created: boolean;
  /** The messages as read, and the transaction port their writes go through (message-writes.ts). */
  messages: MessageStore & MessageTransactions;
  /** D63: who dismissed which message, for readers signed in as a person. */
  dismissals: DismissalStore;
  /** D63 webhooks, the outbox of message events and the delivery log. */
  webhooks: WebhookStore;
  apiKeys: ApiKeyStore;
  /** Datasets and series. */
  metadata: MetadataStore;
  /** The series' value blocks. */
  blocks: BlockStore;
  /** Staged imports (meridian import). */
  imports: Imports;
  /** The key that seals cursors, the same in every process on the database. */
  cursorKey: Buffer;
  /** The SQLite connection (for tests and the CLI); absent on PostgreSQL. */
  sqlite?: Db;
  /** The PostgreSQL pool (for tests and the CLI); absent on SQLite. */
  postgres?: Sql;
  /** D71: where reads go, with MERIDIAN_DB_READ (for tests and the figures). */
  reads?: ReadRouter;
  /** Runs `fn` unless another process on the database ran job `name` within the interval (PostgreSQL); SQLite runs it. */
  oncePerInterval<T>(name: string, intervalS: number, fn: () => Promise<T>): Promise<T | undefined>;
  /** Whether an error means the database is away for now (a 503), not a defect. */
  isUnavailable: (e: unknown) => boolean;
  /** On PostgreSQL: the longest a call waits for the database before it is a 503 (the connect plus the statement timeout, D40). */
  waitLimitMs?: number;
  /** A trivial query (readiness, D57); rejects when the database cannot answer it. */
  ping(): Promise<void>;
  /** Calls fn with false when the connection that hears other processes' writes is lost, true when it is back (PostgreSQL). */
  onLink(fn: (live: boolean) => void): () => void;
  /** Resolves once every write committed so far is on disk (D66; SQLite: sqlite/wal-sync.ts). */
  durable: () => Promise<void>;
  /** Calls fn with the number of writes in each transaction the group commit committed (D66). */
  onCommitGroup(fn: (writes: number) => void): void;
  /** Once serving: the SQLite connection stops waiting for locks and checkpoints on a timer. */
  serving(logger: Logger): void;
  close(): Promise<void>;
}

/** Opens MERIDIAN_DB; `creation` says what may be made where there is no SQLite file yet (database-file.ts). */
export async function openBackend(settings: Settings, creation: Creation): Promise<Backend> {
  return isPostgresUrl(settings.db) ? openPostgres(settings) : openSqlite(settings.db, creation);
}

// The server's WAL checkpoint period (checkpoint.ts): short enough that each one copies little.
const CHECKPOINT_MS = 1_000;

function openSqlite(path: string, creation: Creation): Backend {
  const created = prepareDatabaseFile(path, creation);
  const db = openDatabase(path);
  let stopCheckpoints = () => {};
  let walSync: WalSync | undefined;
  return {
    kind: "sqlite",
    where: path,
    created,
    messages: new SqliteMessageStore(db),
    dismissals: new SqliteDismissalStore(db),
    webhooks: new SqliteWebhookStore(db),
    apiKeys: new SqliteApiKeyStore(db),
    metadata: new SqliteMetadataStore(db),
    blocks: new SqliteBlockStore(db),
    imports: new SqliteImports(db),
    cursorKey: serverSecret(db, "cursor-key"),
    sqlite: db,
    oncePerInterval: (_name, _intervalS, fn) => fn(),
    isUnavailable: () => false, // transport/database-retry-interceptor.ts retries SQLITE_BUSY
    ping: async () => void db.prepare("SELECT 1").get(),
    onLink: () => () => {}, // every write is seen: the file is read
    onCommitGroup: (fn) => void (groupCommit(db).onGroup = fn),
    // FULL until serving; then NORMAL, and answers wait for walSync (wal-sync.ts says why).
    durable: () => walSync?.durable() ?? Promise.resolve(),
    serving(logger) {
      neverWaitForLocks(db); // start-up may wait for an import's lock; serving never does (D51, transport/database-retry-interceptor.ts)
      db.pragma("synchronous = NORMAL");
      walSync = new WalSync(db, `${db.name}-wal`);
      boundPageCache(db); // D28
      stopCheckpoints = startCheckpoints(db, { intervalMs: CHECKPOINT_MS, logger }).stop;
    },
    async close() {
      stopCheckpoints();
      walSync?.close();
      db.close();
    },
  };
}

async function openPostgres(settings: Settings): Promise<Backend> {
  const options = {
    url: settings.db,
    poolSize: settings.pgPool,
    statementTimeoutMs: settings.pgStatementTimeoutMs,
    connectTimeoutS: settings.pgConnectTimeoutS,
    listenUrl: settings.dbListen, // D71: LISTEN needs a session, which a transaction pooler does not keep
  };
  const sql = connectPostgres(options);
  // D71: listings and value blocks read from standbys that have replayed what they must show.
  const reads = settings.dbRead ? new ReadRouter(sql, { ...options, readUrl: settings.dbRead, waitMs: settings.dbReadWaitMs }) : undefined;
  const q = reads?.routed() ?? sql;
  // Webhook delivery turns hold a session advisory lock, which a transaction pooler would leave on
  // whichever server connection took it: with MERIDIAN_DB_LISTEN (MERIDIAN_DB pooled) that store goes direct.
  const direct = settings.dbListen ? connectPostgres({ ...options, url: settings.dbListen, poolSize: 2 }) : undefined;
  let changes: ChangeFeed | undefined;
  try {
    const created = (await migratePostgres(sql)) === PG_MIGRATIONS.length; // every migration: the schema was empty
    await discardAbandonedPgImports(sql); // as SQLite's open does
    changes = await ChangeFeed.listen(options);
    const feed = changes;
    return {
      kind: "postgres",
      where: displayUrl(settings.db),
      created,
      messages: reads ? reads.route(new PostgresMessageStore(q, changes), ["list"]) : new PostgresMessageStore(sql, changes),
      dismissals: new PostgresDismissalStore(sql, changes),
      webhooks: new PostgresWebhookStore(direct ?? sql),
      apiKeys: new PostgresApiKeyStore(sql, changes),
      metadata: new PostgresMetadataStore(sql),
      blocks: reads
        ? reads.route(new PostgresBlockStore(q, PG_SERIES_BLOCKS, false, changes), ["summaries", "payloads"])
        : new PostgresBlockStore(sql, PG_SERIES_BLOCKS, false, changes),
      imports: new PostgresImports(sql),
      postgres: sql,
      reads,
      cursorKey: await pgServerSecret(sql, "cursor-key"),
      oncePerInterval: (name, intervalS, fn) => oncePerInterval(sql, name, intervalS, fn),
      isUnavailable: isTransientPgError,
      waitLimitMs: settings.pgConnectTimeoutS * 1000 + settings.pgStatementTimeoutMs,
      ping: async () => {
        await sql`SELECT 1`;
      },
      onLink: (fn) => feed.onLink(fn),
      onCommitGroup: (fn) => void (pgGroupCommit(sql).onGroup = fn),
      durable: () => Promise.resolve(), // a COMMIT returns once the server has it (and its standbys, as configured)
      serving() {
        // nothing to start: PostgreSQL checkpoints itself
      },
      close: async () => {
        await Promise.all([sql.end({ timeout: 5 }), feed.close(), reads?.close(), direct?.end({ timeout: 5 })]);
      },
    };
  } catch (e) {
    await Promise.all([sql.end({ timeout: 1 }), changes?.close(), reads?.close(), direct?.end({ timeout: 1 })]);
    throw e;
  }
}
