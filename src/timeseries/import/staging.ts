// An import's blocks, staged where no reader looks and then published at once
// (D30 all or nothing, D51 never holding a write lock for long), whichever
// database holds them: sqlite/import-staging.ts, postgres/import-staging.ts.
import type { FieldKind } from "../blocks/block-codec.js";
import type { Maybe } from "../blocks/block-store.js";
import type { RowSet } from "../blocks/row-set.js";

export interface Staging {
  /** Stages rows (any order; later rows win, as in an upload): invisible until publish(). */
  stage(kinds: readonly FieldKind[], rows: RowSet): Maybe<void>;
  /** Makes every staged row part of the series, in one transaction; says how many it stored and how many stored rows they replaced. */
  publish(kinds: readonly FieldKind[]): Maybe<Published>;
  /** Removes the import and its staged blocks (instead of publishing). */
  discard(): Maybe<void>;
}

export interface Published {
  /** Rows staged (one per distinct timestamp), now the series'. */
  stored: number;
  /** Rows the series held before that staged rows replaced. */
  replaced: number;
}

export interface Imports {
  /** Registers an import into series `sid`, after removing what abandoned imports left. */
  begin(sid: number): Promise<Staging>;
}
