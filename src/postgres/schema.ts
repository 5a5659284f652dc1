// The PostgreSQL schema, as an ordered list of migrations (the twin of
// ../sqlite/schema.ts for SQLite: same tables, same meaning, PostgreSQL's types).
// A migration is never edited once released; a change is a new one at the end.
// Replicas starting together migrate once: under an advisory lock.
import type { TransactionSql } from "postgres";
import type { Migration } from "../kernel/migration.js";
import type { Sql } from "./database.js";
import { BLOCKS_CHANGED, CHANGES_CHANNEL } from "./changes.js";
import { summaryOfStored } from "../timeseries/blocks/block-store.js";

type PgMigration = Migration<(tx: TransactionSql) => Promise<void>>;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "api keys, server secrets, feature status messages, change notifications",
    sql: `
      CREATE TABLE api_keys (
        id          text PRIMARY KEY,
        client_id   text NOT NULL,
        roles       text NOT NULL,  -- JSON array
        scopes      text NOT NULL,  -- JSON array
        projects    text NOT NULL,  -- JSON array
        secret_hash bytea NOT NULL, -- SHA-256 of the secret part
        created_at  text NOT NULL,
        revoked_at  text
      );
      CREATE TABLE server_secrets (
        name  text PRIMARY KEY,
        value bytea NOT NULL
      );
      -- An identity never reuses an id; integer keeps ids within the API's int32.
      CREATE TABLE messages (
        id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        feature_id    text,            -- NULL: a global message
        type          text NOT NULL,
        title         text NOT NULL,
        body          text NOT NULL,
        start_date    bigint NOT NULL, -- epoch seconds, UTC
        expiring_date bigint NOT NULL
      );
      CREATE INDEX messages_by_start ON messages (feature_id, start_date, id);
      CREATE INDEX messages_by_expiry ON messages (feature_id, expiring_date, id);
      CREATE INDEX messages_expiring ON messages (expiring_date);
      CREATE INDEX messages_starting ON messages (start_date);
      -- Runs of jobs that must run once per interval across replicas (retention cleanup).
      CREATE TABLE job_runs (
        name    text PRIMARY KEY,
        last_at timestamptz NOT NULL
      );

      -- Every committed write to a shared table tells every replica (changes.ts).
      CREATE FUNCTION meridian_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CHANGES_CHANNEL}', TG_TABLE_NAME);
        RETURN NULL;
      END $$;
      CREATE TRIGGER messages_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON messages
        FOR EACH STATEMENT EXECUTE FUNCTION meridian_notify_change();
      CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION meridian_notify_change();
    `,
  },
  {
    version: 2,
    name: "time series: datasets, series, value blocks, staged imports",
    sql: `
      CREATE TABLE datasets (
        id         text PRIMARY KEY,  -- GUID, lower case (D23)
        project    text NOT NULL,
        items      text NOT NULL,     -- JSON arrays and object, as the API shows them
        properties text NOT NULL,
        metadata   text NOT NULL
      );
      CREATE INDEX datasets_by_project ON datasets (project);
      -- sid keys the blocks: an integer is cheaper there than a GUID.
      CREATE TABLE time_series (
        sid         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id          text NOT NULL UNIQUE,
        dataset_id  text NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        item        text NOT NULL,
        properties  text NOT NULL,
        data_fields text NOT NULL
      );
      CREATE INDEX time_series_by_dataset ON time_series (dataset_id, id);
      -- One row per block of up to 16,536 values; a series' blocks never overlap.
      -- Payloads are compressed already: stored as they are, out of line.
      CREATE TABLE blocks (
        id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        sid      bigint NOT NULL REFERENCES time_series (sid) ON DELETE CASCADE,
        first_ts bigint NOT NULL,     -- epoch seconds of the first and last row
        last_ts  bigint NOT NULL,
        rows     integer NOT NULL,
        payload  bytea NOT NULL       -- native/src/block-codec.h
      );
      ALTER TABLE blocks ALTER COLUMN payload SET STORAGE EXTERNAL;
      CREATE UNIQUE INDEX blocks_by_time ON blocks (sid, first_ts) INCLUDE (last_ts);
      -- An import (D30) stages its blocks here (COPY), then moves them into
      -- blocks in one short transaction. Its importer holds an advisory lock
      -- on the import's id while it runs: an import whose lock is free is
      -- abandoned, whichever host ran it.
      CREATE TABLE imports (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        sid        bigint NOT NULL REFERENCES time_series (sid) ON DELETE CASCADE,
        host       text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE import_blocks (
        id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        import_id bigint NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
        first_ts  bigint NOT NULL,
        last_ts   bigint NOT NULL,
        rows      integer NOT NULL,
        payload   bytea NOT NULL
      );
      ALTER TABLE import_blocks ALTER COLUMN payload SET STORAGE EXTERNAL;
      CREATE UNIQUE INDEX import_blocks_by_time ON import_blocks (import_id, first_ts) INCLUDE (last_ts);
    `,
  },
  {
    version: 3,
    name: "message versions, for ETags and conditional writes (D47)",
    sql: `
      ALTER TABLE messages ADD COLUMN version integer NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 4,
    name: "the audit trail of messages (D48)",
    sql: `
      CREATE TABLE message_audit (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at         bigint NOT NULL,  -- epoch milliseconds
        action     text NOT NULL,    -- create, update, delete, cleanup
        message_id integer NOT NULL,
        feature_id text,
        client_id  text,
        key_id     text,
        issuer     text,
        subject    text,
        before     text,             -- the stored message before and after, as JSON
        after      text
      );
      CREATE INDEX message_audit_by_at ON message_audit (at);
      CREATE INDEX message_audit_by_message ON message_audit (message_id, id);
      CREATE INDEX message_audit_by_feature ON message_audit (feature_id, id);
      CREATE INDEX message_audit_by_client ON message_audit (client_id, id);
    `,
  },
  {
    version: 5,
    name: "public keys for pages (D60) and a key's audiences (D61)",
    sql: `
      ALTER TABLE api_keys ADD COLUMN kind text NOT NULL DEFAULT 'private' CHECK (kind IN ('private', 'public'));
      ALTER TABLE api_keys ADD COLUMN features text NOT NULL DEFAULT '[]';   -- JSON array: a public key's features
      ALTER TABLE api_keys ADD COLUMN origins text NOT NULL DEFAULT '[]';    -- JSON array: the origins it serves; empty: any
      ALTER TABLE api_keys ADD COLUMN audiences text NOT NULL DEFAULT '[]';  -- JSON array
    `,
  },
  {
    version: 6,
    name: "block summaries, for charts (D65); every replica told which series' blocks changed",
    sql: `
      -- The rows of a block's first, last, and each Single and Double field's
      -- minimum and maximum (native/src/block-summary.h); NULL: decoded instead.
      ALTER TABLE blocks ADD COLUMN summary bytea;
      ALTER TABLE import_blocks ADD COLUMN summary bytea;
      -- Replicas keep hot blocks in memory (block-cache.ts): each is told the series a committed write changed.
      CREATE FUNCTION meridian_notify_blocks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${CHANGES_CHANNEL}', '${BLOCKS_CHANGED}' || sid) FROM (SELECT DISTINCT sid FROM changed) s;
        RETURN NULL;
      END $$;
      CREATE TRIGGER blocks_inserted AFTER INSERT ON blocks REFERENCING NEW TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION meridian_notify_blocks();
      CREATE TRIGGER blocks_deleted AFTER DELETE ON blocks REFERENCING OLD TABLE AS changed
        FOR EACH STATEMENT EXECUTE FUNCTION meridian_notify_blocks();
    `,
    fill: async (tx) => {
      for (let after = 0; ;) {
        const rows = await tx<{ id: string; payload: Buffer }[]>`SELECT id, payload FROM blocks WHERE id > ${after} ORDER BY id LIMIT 1024`;
        if (rows.length === 0) return;
        for (const r of rows) {
          const summary = summaryOfStored(r.payload);
          if (summary) await tx`UPDATE blocks SET summary = ${summary} WHERE id = ${r.id}`;
        }
        after = Number(rows[rows.length - 1].id);
      }
    },
  },
  {
    version: 7,
    name: "message targeting and translations (D61, D62)",
    sql: `
      -- JSON: audiences and path globs as arrays of strings (empty: everyone, every
      -- page), translations as an object of {title, body} by BCP 47 tag.
      ALTER TABLE messages ADD COLUMN audiences text NOT NULL DEFAULT '[]';
      ALTER TABLE messages ADD COLUMN paths text NOT NULL DEFAULT '[]';
      ALTER TABLE messages ADD COLUMN translations text NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 8,
    name: "dismissals that follow a person, and messages that may not be dismissed (D63)",
    sql: `
      ALTER TABLE messages ADD COLUMN dismissible integer NOT NULL DEFAULT 1 CHECK (dismissible IN (0, 1));
      -- A subject (a token's issuer and sub, as JSON) dismissed a message at a
      -- version; a later version is not dismissed. Gone with the message.
      CREATE TABLE message_dismissals (
        subject    text NOT NULL,
        message_id integer NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        version    integer NOT NULL,
        at         bigint NOT NULL, -- epoch milliseconds
        PRIMARY KEY (subject, message_id)
      );
      CREATE INDEX message_dismissals_by_message ON message_dismissals (message_id);
      CREATE TRIGGER message_dismissals_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON message_dismissals
        FOR EACH STATEMENT EXECUTE FUNCTION meridian_notify_change();
    `,
  },
  {
    version: 9,
    name: "webhooks and the outbox of message events (D63)",
    sql: `
      CREATE TABLE webhooks (
        id         text PRIMARY KEY,
        url        text NOT NULL,
        secret     text NOT NULL,
        events     text NOT NULL,    -- the event types it takes, separated by spaces
        created_at bigint NOT NULL   -- epoch milliseconds
      );
      CREATE TABLE message_events (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at         bigint NOT NULL,  -- epoch milliseconds
        type       text NOT NULL,
        message_id integer NOT NULL,
        message    text NOT NULL,    -- the stored message (before a delete), as JSON
        once_key   text UNIQUE       -- time events: the message and the instant that passed
      );
      CREATE INDEX message_events_by_message ON message_events (message_id, id);
      CREATE TABLE webhook_deliveries (
        webhook_id  text NOT NULL,
        event_id    bigint NOT NULL,
        message_id  integer NOT NULL,
        state       text NOT NULL DEFAULT 'pending',
        attempts    integer NOT NULL DEFAULT 0,
        next_at     bigint NOT NULL,
        last_at     bigint,
        last_status integer,
        last_answer text,
        last_error  text,
        PRIMARY KEY (webhook_id, event_id)
      );
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, message_id, event_id) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
      CREATE TABLE message_event_marks (
        name text PRIMARY KEY,
        mark bigint NOT NULL
      );
    `,
  },
];

/** Applies the migrations above the database's version, all in one transaction (DDL is transactional here); returns how many. */
export async function migratePostgres(sql: Sql, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number> {
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  return sql.begin(async (tx) => {
    // One migrator at a time across replicas; released at commit.
    await tx`SELECT pg_advisory_xact_lock(hashtext('meridian.migrate'))`;
    await tx`CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`;
    const row = (await tx<{ version: number | null }[]>`SELECT max(version) AS version FROM schema_version`).at(0);
    const current = row?.version ?? 0; // null: a new database
    if (current > latest) {
      throw new Error(`database schema version ${current} is newer than this Meridian (${latest}); upgrade Meridian`);
    }
    let applied = 0;
    for (const m of migrations) {
      if (m.version <= current) continue;
      await tx.unsafe(m.sql);
      await m.fill?.(tx);
      await tx`INSERT INTO schema_version (version) VALUES (${m.version})`;
      applied++;
    }
    return applied;
  });
}
