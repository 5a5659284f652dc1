// D61 audience names: the one rule for a message's audiences (what it is
// aimed at) and for an API key's (D60: what its caller is matched as). A
// token's groups and roles claims are matched as they come, never stored.

/** At most this many audiences on a message or a key. */
export const MAX_AUDIENCES = 50;
/** Characters of one audience name. */
export const AUDIENCE_MAX = 200;
/** The rule in words, for messages that state it whole. */
export const AUDIENCE_RULE = `1 to ${AUDIENCE_MAX} characters, none of them control characters`;

/** Control characters (C0, DEL, C1): no audience, glob or page path holds one. */
export const CONTROL_CHARACTER = /\p{Cc}/u;

/** Why `name` is not an audience name, or undefined when it is one. */
export function audienceProblem(name: string): string | undefined {
  if (name.trim() === "") return "must not be empty";
  if (name.length > AUDIENCE_MAX) return `must be at most ${AUDIENCE_MAX} characters`;
  if (CONTROL_CHARACTER.test(name)) return "must not hold control characters";
  return undefined;
}
