// The one walk behind every value read, whole range or paged, one series or
// many, JSON or columns: series in request order, each block of the range in
// time order, until the page's bounds (D26, D35). What a block's rows become
// is the encoder's business; the walk only counts them.
import { blockBatchesOf, blocksOf, firstBatch, type BlockStore, type StoredBlock } from "./blocks/block-store.js";
import type { Taken } from "../native/binding.js";
import type { ResumePoint } from "./value-cursor.js";
import { freeNow } from "../native/detach.js";

/** What an encoder made of the rows of one block that lie in [from, to], at most maxRows of them. */
export interface Encoded<T> extends Taken {
  out: T;
}

export type BlockEncoder<T> = (payload: Uint8Array, from: number, to: number, maxRows: number, first: boolean) => Encoded<T>;

/**
 * An encoder of a group of blocks at once, off the event loop: the walk starts
 * a group's work while the answer of the group before is being sent, so that
 * encoding and the socket's copying overlap on two cores (D64's Arrow answer).
 */
export interface GroupEncoder<T> {
  /** The most bytes a block of `rows` rows of the series may take. */
  bound(series: WalkSeries, rows: number): number;
  /** The blocks' rows of [from, to], at most maxRows in all, in `bytes` at most (the sum of their bounds). */
  encode(blocks: readonly StoredBlock[], from: number, to: number, maxRows: number, bytes: number): Promise<Encoded<T>>;
  /** Ends what an encoding made that the walk will never hand on (the read was given up meanwhile): its owner is the walk till then. */
  discard(out: T): void;
}

/** An answer's encoders: every format's per block, and a format's group one when it has one. */
export interface Encoders<T> {
  block: BlockEncoder<T>;
  group?: GroupEncoder<T>;
}

/**
 * Answer bytes a group of blocks may make at most: about four W1 blocks of
 * Arrow. Two groups are in the works at a time (one sent, one written), so
 * this bounds what a read holds (D28) besides the transport's lead. Measured
 * on a 10M-row read: 1 MiB and 2 MiB groups equally fast (61 ms by curl),
 * 512 KiB slower; a zstd answer's peak RSS grew by 28 MiB with 1 MiB groups,
 * 36 MiB with 2 MiB, 16 MiB with one block a group.
 */
const GROUP_BYTES = 1 << 20;
/** Groups in the works at once: the one handed on, and the next. */
const IN_WORKS = 2;

export interface WalkSeries {
  id: string;
  sid: number;
  /** Its data fields, in order: what an answer's columns are (D64). */
  dataFields: readonly { name: string; dataType: string }[];
}

export interface WalkPlan {
  series: readonly WalkSeries[];
  /** Inclusive range for series that have not begun. */
  from: number;
  to: number;
  /** Rows in the page; Infinity for a whole-range read. */
  limit: number;
  /** Series entries in the page; Infinity unless paged multi-series. */
  maxEntries: number;
  start: ResumePoint;
}

/** How one series' walk ended: the rows it took, the last one's timestamp, and whether rows of its range were left for the next page. */
interface SeriesEnd {
  taken: number;
  last: number;
  cut: boolean;
}

export type WalkStep<T> =
  { kind: "begin"; series: WalkSeries } | { kind: "rows"; out: T; rows: number } | { kind: "end"; series: WalkSeries };

/** Walks the plan; returns where the next page starts, or undefined at the end of the data. */
export async function* walkValues<T>(
  store: BlockStore,
  plan: WalkPlan,
  encoders: Encoders<T>,
): AsyncGenerator<WalkStep<T>, ResumePoint | undefined> {
  const { series, to } = plan;
  let budget = plan.limit;
  let entries = 0;
  for (let index = plan.start.index; index < series.length; index++) {
    if (entries === plan.maxEntries) return { index, after: null };
    const s = series[index];
    const after = index === plan.start.index ? plan.start.after : null;
    const from = after !== null ? after + 1 : plan.from;
    yield { kind: "begin", series: s };
    entries++;
    const end = encoders.group
      ? yield* seriesByGroups(store, s, from, to, budget, encoders.group)
      : yield* seriesByBlocks(store, s, from, to, budget, encoders.block);
    budget -= end.taken;
    yield { kind: "end", series: s };
    if (end.cut) return { index, after: end.last };
    if (budget === 0 && index + 1 < series.length) return { index: index + 1, after: null };
  }
  return undefined;
}

/** A series' walk so far, block by block or group by group: the rows handed on against the page's budget. */
class Taking {
  taken = 0;
  last = 0;

  constructor(
    private readonly store: BlockStore,
    private readonly sid: number,
    private readonly to: number,
    private readonly budget: number,
  ) {}

  /** Hands on what an encoder made, if it holds rows. */
  *handOn<T>(e: Encoded<T>): Generator<WalkStep<T>> {
    if (e.rows === 0) return;
    yield { kind: "rows", out: e.out, rows: e.rows };
    this.last = e.last;
    this.taken += e.rows;
  }

  /** How the series ended, once the budget is spent (on a part whose own rows ran out or not, `more`); undefined while it is not. */
  async spent(more: boolean): Promise<SeriesEnd | undefined> {
    if (this.taken < this.budget) return undefined;
    const cut = more || (this.last < this.to && (await this.store.startsWithin(this.sid, this.last + 1, this.to)));
    return { taken: this.taken, last: this.last, cut };
  }

  /** How the series ended with its rows all taken. */
  done(): SeriesEnd {
    return { taken: this.taken, last: this.last, cut: false };
  }
}

/** One series' rows, a block at a time. */
async function* seriesByBlocks<T>(
  store: BlockStore,
  s: WalkSeries,
  from: number,
  to: number,
  budget: number,
  encode: BlockEncoder<T>,
): AsyncGenerator<WalkStep<T>, SeriesEnd> {
  const t = new Taking(store, s.sid, to, budget);
  for await (const block of blocksOf(store, s.sid, from, to, budget)) {
    const e = encode(block.payload, from, to, budget - t.taken, t.taken === 0);
    yield* t.handOn(e);
    const end = await t.spent(e.more);
    if (end) return end;
  }
  return t.done();
}

/**
 * One series' rows, a group of blocks at a time, the next group's encoding
 * started before the group before is handed on. A group is started early only
 * when the stored rows of every group in the works fit the budget (a block
 * gives at most its stored rows), so an early group never stops short of a
 * page's end that an earlier group's fewer rows would have moved: the answer
 * is the one a block at a time gives.
 */
async function* seriesByGroups<T>(
  store: BlockStore,
  s: WalkSeries,
  from: number,
  to: number,
  budget: number,
  encoder: GroupEncoder<T>,
): AsyncGenerator<WalkStep<T>, SeriesEnd> {
  const t = new Taking(store, s.sid, to, budget);
  let end: SeriesEnd | undefined; // once the budget is spent
  const working: { job: Promise<Encoded<T>>; rows: number; group: StoredBlock[] }[] = [];
  let inWorks = 0; // stored rows of the groups in the works

  // Hands on the oldest group's rows; true once the budget is spent (nothing else is in the works then: it would not have fitted).
  async function* finish(): AsyncGenerator<WalkStep<T>, boolean> {
    const oldest = working.shift();
    if (!oldest) return false;
    const { job, rows, group } = oldest;
    inWorks -= rows;
    const e = await job;
    // The group's payloads, now that its job has settled (the addon's thread reads them until then): freed at once, as blocksOf frees a block's (D28).
    for (const b of group) freeNow(b.payload);
    yield* t.handOn(e);
    end = await t.spent(e.more);
    return end !== undefined;
  }
  // Starts a group: at once when it fits beside those in the works, else once they are handed on.
  async function* launch(group: StoredBlock[], bytes: number): AsyncGenerator<WalkStep<T>, boolean> {
    const rows = group.reduce((n, b) => n + b.rows, 0);
    if (inWorks + rows > budget - t.taken) while (working.length > 0) if (yield* finish()) return true;
    if (working.length === IN_WORKS) if (yield* finish()) return true;
    const job = encoder.encode(group, from, to, budget - t.taken - inWorks, bytes);
    job.catch(() => undefined); // awaited by finish(); a read given up before then must not leave it unhandled
    working.push({ job, rows, group });
    inWorks += rows;
    return false;
  }

  try {
    let group: StoredBlock[] = [];
    let bytes = 0;
    for await (const batch of blockBatchesOf(store, s.sid, from, to, firstBatch(budget))) {
      for (const block of batch) {
        const b = encoder.bound(s, block.rows);
        if (group.length > 0 && bytes + b > GROUP_BYTES) {
          if (yield* launch(group, bytes)) return end ?? t.done();
          group = [];
          bytes = 0;
        }
        group.push(block);
        bytes += b;
      }
    }
    if (group.length > 0 && (yield* launch(group, bytes))) return end ?? t.done();
    while (working.length > 0) if (yield* finish()) return end ?? t.done();
    return t.done();
  } finally {
    // Groups still in the works when the walk ends early (its reader gone): once each settles,
    // what it made is ended and its payloads freed, as finish() would have.
    for (const { job, group } of working.splice(0))
      void job
        .then(
          (e) => encoder.discard(e.out),
          () => undefined,
        )
        .finally(() => {
          for (const b of group) freeNow(b.payload);
        });
  }
}
