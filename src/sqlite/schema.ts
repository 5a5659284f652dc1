// The schema of Meridian's database, as an ordered list of migrations. This
// module owns it: no other file creates or alters a table. A migration is
// never edited once released; a change is a new migration at the end.

import type { Migration } from "../kernel/migration.js";
import type Database from "better-sqlite3";
import { summaryOfStored } from "../timeseries/blocks/block-store.js";

/** A SQLite migration: its fill step runs on the connection (better-sqlite3's type: database.ts imports this module). */
export type SqliteMigration = Migration<(db: Database.Database) => void>;

export const MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "api keys and server secrets",
    sql: `
      CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        client_id   TEXT NOT NULL,
        roles       TEXT NOT NULL,  -- JSON array
        scopes      TEXT NOT NULL,  -- JSON array
        projects    TEXT NOT NULL,  -- JSON array
        secret_hash BLOB NOT NULL,  -- SHA-256 of the secret part
        created_at  TEXT NOT NULL,
        revoked_at  TEXT
      ) STRICT;

      -- Keys the server makes for itself (cursor signing), kept so they survive restarts.
      CREATE TABLE server_secrets (
        name  TEXT PRIMARY KEY,
        value BLOB NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: "feature status messages",
    sql: `
      -- AUTOINCREMENT: an id is never reused, so a client's id and a cursor never name another message.
      CREATE TABLE messages (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        feature_id    TEXT,             -- NULL: a global message
        type          TEXT NOT NULL,
        title         TEXT NOT NULL,
        body          TEXT NOT NULL,
        start_date    INTEGER NOT NULL, -- epoch seconds, UTC
        expiring_date INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX messages_by_start ON messages (feature_id, start_date, id);
      CREATE INDEX messages_by_expiry ON messages (feature_id, expiring_date, id);
      CREATE INDEX messages_expiring ON messages (expiring_date);
    `,
  },
  {
    version: 3,
    name: "next start of a message, for the listing cache",
    sql: `
      CREATE INDEX messages_starting ON messages (start_date);
    `,
  },
  {
    version: 4,
    name: "time series: datasets, series, value blocks",
    sql: `
      CREATE TABLE datasets (
        id         TEXT PRIMARY KEY,   -- GUID, lower case (D23)
        project    TEXT NOT NULL,
        items      TEXT NOT NULL,      -- JSON arrays and object, as the API shows them
        properties TEXT NOT NULL,
        metadata   TEXT NOT NULL
      ) STRICT;
      CREATE INDEX datasets_by_project ON datasets (project);
      -- sid keys the blocks: an integer is cheaper there than a GUID.
      CREATE TABLE time_series (
        sid         INTEGER PRIMARY KEY,
        id          TEXT NOT NULL UNIQUE,
        dataset_id  TEXT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
        item        TEXT NOT NULL,
        properties  TEXT NOT NULL,
        data_fields TEXT NOT NULL
      ) STRICT;
      CREATE INDEX time_series_by_dataset ON time_series (dataset_id, id);
      -- One row per block of up to 16,536 values; a series' blocks never overlap.
      CREATE TABLE blocks (
        sid      INTEGER NOT NULL REFERENCES time_series (sid) ON DELETE CASCADE,
        first_ts INTEGER NOT NULL,     -- epoch seconds of the first and last row
        last_ts  INTEGER NOT NULL,
        rows     INTEGER NOT NULL,
        payload  BLOB NOT NULL         -- native/src/block-codec.h
      ) STRICT;
      CREATE UNIQUE INDEX blocks_by_time ON blocks (sid, first_ts);
    `,
  },
  {
    version: 5,
    name: "imports staged out of readers' sight",
    sql: `
      -- An import (D30) writes its blocks here in short transactions, then moves
      -- them into blocks in one short transaction (D51): all or nothing without
      -- holding the write lock for the whole file. No reader looks here.
      CREATE TABLE imports (
        id         INTEGER PRIMARY KEY,
        sid        INTEGER NOT NULL REFERENCES time_series (sid) ON DELETE CASCADE,
        pid        INTEGER NOT NULL,   -- the importing process and its host: a dead one's import is abandoned
        host       TEXT NOT NULL,
        started_at TEXT NOT NULL,
        published  INTEGER NOT NULL DEFAULT 0  -- 1 once its blocks are in blocks; the staged copy is then removed
      ) STRICT;
      CREATE TABLE import_blocks (
        import_id INTEGER NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
        first_ts  INTEGER NOT NULL,
        last_ts   INTEGER NOT NULL,
        rows      INTEGER NOT NULL,
        payload   BLOB NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX import_blocks_by_time ON import_blocks (import_id, first_ts);
    `,
  },
  {
    version: 6,
    name: "message versions, for ETags and conditional writes (D47)",
    sql: `
      ALTER TABLE messages ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 7,
    name: "the audit trail of messages (D48)",
    sql: `
      CREATE TABLE message_audit (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,  -- epoch milliseconds
        action     TEXT NOT NULL,     -- create, update, delete, cleanup
        message_id INTEGER NOT NULL,
        feature_id TEXT,              -- NULL: a global message
        client_id  TEXT,              -- the writer; NULL for the retention cleanup
        key_id     TEXT,              -- its API key, or its token's iss and sub
        issuer     TEXT,
        subject    TEXT,
        before     TEXT,              -- the stored message before and after, as JSON
        after      TEXT
      ) STRICT;
      CREATE INDEX message_audit_by_at ON message_audit (at);
      CREATE INDEX message_audit_by_message ON message_audit (message_id, id);
      CREATE INDEX message_audit_by_feature ON message_audit (feature_id, id);
      CREATE INDEX message_audit_by_client ON message_audit (client_id, id);
    `,
  },
  {
    version: 8,
    name: "imports stage in a file of their own (D58)",
    sql: `
      -- Staged blocks left free pages in this file as large as the import
      -- itself once they were moved: an import now stages in its own file
      -- beside this one (IMPORT_STAGING below) and this file grows by the blocks alone.
      DROP TABLE import_blocks;
    `,
  },
  {
    version: 9,
    name: "public keys for pages (D60) and a key's audiences (D61)",
    sql: `
      ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'private' CHECK (kind IN ('private', 'public'));
      ALTER TABLE api_keys ADD COLUMN features TEXT NOT NULL DEFAULT '[]';   -- JSON array: a public key's features
      ALTER TABLE api_keys ADD COLUMN origins TEXT NOT NULL DEFAULT '[]';    -- JSON array: the origins it serves; empty: any
      ALTER TABLE api_keys ADD COLUMN audiences TEXT NOT NULL DEFAULT '[]';  -- JSON array
    `,
  },
  {
    version: 10,
    name: "block summaries, for charts (D65)",
    sql: `
      -- The rows of a block's first, last, and each Single and Double field's
      -- minimum and maximum (native/src/block-summary.h); NULL: decoded instead.
      ALTER TABLE blocks ADD COLUMN summary BLOB;
    `,
    fill: (db) => {
      const read = db.prepare<[number], { rowid: number; payload: Buffer }>(
        "SELECT rowid, payload FROM blocks WHERE rowid > ? ORDER BY rowid LIMIT 1024",
      );
      const write = db.prepare<[Buffer, number]>("UPDATE blocks SET summary = ? WHERE rowid = ?");
      for (let rows = read.all(0); rows.length > 0; rows = read.all(rows[rows.length - 1].rowid)) {
        for (const r of rows) {
          const summary = summaryOfStored(r.payload);
          if (summary) write.run(summary, r.rowid);
        }
      }
    },
  },
  {
    version: 11,
    name: "message targeting and translations (D61, D62)",
    sql: `
      -- JSON: audiences and path globs as arrays of strings (empty: everyone, every
      -- page), translations as an object of {title, body} by BCP 47 tag.
      ALTER TABLE messages ADD COLUMN audiences TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE messages ADD COLUMN paths TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE messages ADD COLUMN translations TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 12,
    name: "dismissals that follow a person, and messages that may not be dismissed (D63)",
    sql: `
      ALTER TABLE messages ADD COLUMN dismissible INTEGER NOT NULL DEFAULT 1 CHECK (dismissible IN (0, 1));
      -- A subject (a token's issuer and sub, as JSON) dismissed a message at a
      -- version; a later version is not dismissed. Gone with the message.
      CREATE TABLE message_dismissals (
        subject    TEXT NOT NULL,
        message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        version    INTEGER NOT NULL,
        at         INTEGER NOT NULL, -- epoch milliseconds
        PRIMARY KEY (subject, message_id)
      ) STRICT;
      CREATE INDEX message_dismissals_by_message ON message_dismissals (message_id);
    `,
  },
  {
    version: 13,
    name: "webhooks and the outbox of message events (D63)",
    sql: `
      CREATE TABLE webhooks (
        id         TEXT PRIMARY KEY,
        url        TEXT NOT NULL,
        secret     TEXT NOT NULL,
        events     TEXT NOT NULL,     -- the event types it takes, separated by spaces
        created_at INTEGER NOT NULL   -- epoch milliseconds
      ) STRICT;
      -- Written in the transaction of the change (or by the clock's scheduler, once: once_key).
      CREATE TABLE message_events (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,  -- epoch milliseconds
        type       TEXT NOT NULL,     -- message.created, .updated, .deleted, .started, .expired
        message_id INTEGER NOT NULL,
        message    TEXT NOT NULL,     -- the stored message (before a delete), as JSON
        once_key   TEXT UNIQUE        -- time events: the message and the instant that passed
      ) STRICT;
      CREATE INDEX message_events_by_message ON message_events (message_id, id);
      CREATE TABLE webhook_deliveries (
        webhook_id  TEXT NOT NULL,
        event_id    INTEGER NOT NULL,
        message_id  INTEGER NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending',  -- pending, delivered, failed
        attempts    INTEGER NOT NULL DEFAULT 0,
        next_at     INTEGER NOT NULL,  -- epoch milliseconds
        last_at     INTEGER,
        last_status INTEGER,
        last_answer TEXT,              -- at most 1 KB of the endpoint's answer
        last_error  TEXT,
        PRIMARY KEY (webhook_id, event_id)
      ) STRICT;
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, message_id, event_id) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
      CREATE TABLE message_event_marks (
        name TEXT PRIMARY KEY,
        mark INTEGER NOT NULL          -- epoch seconds: time events are written up to here
      ) STRICT;
    `,
  },
  {
    version: 14,
    name: "the chart index in an index of its own (D65)",
    sql: `
      -- A chart reads each block's first and last second and summary, never its
      -- payload; in the table the summary comes after the payload, so reading it
      -- walked every payload's overflow pages (1.9 s for a 1B-row series' 60,475
      -- blocks, against 0.11 s from this index; about 130 bytes a block).
      CREATE INDEX blocks_chart ON blocks (sid, first_ts, last_ts, summary);
    `,
  },
];

/**
 * An import's staging file (D58, sqlite/import-staging.ts), attached as
 * `staging` to the importer's connection: its blocks, keyed by the import as
 * in the imports table, where no reader looks. Made new for each import and
 * deleted after it, so it needs no migrations.
 */
export const IMPORT_STAGING = {
  schema: "staging",
  sql: `
    CREATE TABLE staging.import_blocks (
      import_id INTEGER NOT NULL,
      first_ts  INTEGER NOT NULL,
      last_ts   INTEGER NOT NULL,
      rows      INTEGER NOT NULL,
      payload   BLOB NOT NULL,
      summary   BLOB NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX staging.import_blocks_by_time ON import_blocks (import_id, first_ts);
  `,
} as const;
