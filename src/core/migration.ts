// One step of a database's schema, as both dialects write theirs
// (sqlite/schema.ts, postgres/schema.ts): numbered, named, never edited once
// released.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
