// What an answer format is (formats.ts lists them): encoders the value walk
// calls for each block's rows (or a group of blocks'), and a framing of the walk's steps into the
// answer's bytes.
import type { ResumePoint } from "../value-cursor.js";
import type { Encoders, WalkSeries, WalkStep } from "../value-walk.js";

/** What the framing of an answer needs to know besides the steps. */
export interface AnswerShape {
  /** The multi-series endpoint. */
  multi: boolean;
  /** api-version 3: a page, which may end with a cursor. */
  paged: boolean;
  /** The cursor of the page that starts at `at`. */
  cursorFor(at: ResumePoint): string;
  /** The read's series, in the order asked (a format whose one schema covers them all needs them before the first row). */
  series: readonly WalkSeries[];
}

export interface AnswerFormat<T = unknown> {
  /** The media type an Accept header names it by. */
  mediaType: string;
  /** Other media types that choose it. */
  aliases?: readonly string[];
  /** The Content-Type of the answer. */
  contentType: string;
  /** Fresh encoders for one read (they may keep state across that read's blocks, such as the size of their pooled buffers). */
  encoders(): Encoders<T>;
  /** The answer's bytes, in pieces as the walk produces them. */
  frame(steps: AsyncGenerator<WalkStep<T>, ResumePoint | undefined>, shape: AnswerShape): AsyncGenerator<Uint8Array>;
}
