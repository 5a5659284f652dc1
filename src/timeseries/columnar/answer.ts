// A REST values or chart read's answer in the format its Accept header asks
// for (D64): negotiated before any work (a 406 costs nothing), then the
// read's walk with that format's encoder, framed by the format, as the
// HttpBody chunks the REST transport streams (D28).
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { HttpBodySchema, type HttpBody } from "../../gen/google/api/httpbody_pb.js";
import type { ResumePoint } from "../value-cursor.js";
import type { Encoders, WalkStep } from "../value-walk.js";
import type { AnswerShape } from "./answer-format.js";
import { answerFormatFor } from "./formats.js";

/** The steps of a planned read with given encoders. */
export type StepsOf<P> = <T>(plan: P, encoders: Encoders<T>) => AsyncGenerator<WalkStep<T>, ResumePoint | undefined>;

export async function* formattedAnswer<P>(
  ctx: HandlerContext,
  planning: () => Promise<P>,
  steps: StepsOf<P>,
  shapeOf: (plan: P) => AnswerShape,
): AsyncGenerator<HttpBody> {
  const format = answerFormatFor(ctx.requestHeader.get("accept"));
  ctx.responseHeader.set("vary", "accept"); // caches keep one answer per format
  const plan = await planning();
  const walk = steps(plan, format.encoders());
  try {
    for await (const data of format.frame(walk, shapeOf(plan))) {
      yield create(HttpBodySchema, { contentType: format.contentType, data });
    }
  } finally {
    // A frame takes the walk's steps one by one and leaves it suspended when the answer stops
    // early (the client gone): closed here, its encoders give back what they still hold (D28).
    await walk.return(undefined);
  }
}
