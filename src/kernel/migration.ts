// One step of a database's schema, as both dialects write theirs
// (sqlite/schema.ts, postgres/schema.ts): numbered, named, never edited once
// released.
export interface Migration<Fill = never> {
  version: number;
  name: string;
  sql: string;
  /** What SQL alone cannot do (the addon computes it), after `sql`, in the same transaction. */
  fill?: Fill;
}
