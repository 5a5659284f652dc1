// What the OpenAPI document (D41) says of the message routes beyond their
// descriptors, taken from the rules that enforce it (D59): what each field
// accepts (the severities, the listing windows and orders, feature ids, dates,
// page sizes), the create and update bodies, the conditional requests of D47,
// the event streams of D46, and an example of each operation.
import type { DescField } from "@bufbuild/protobuf";
import { FeatureStatusService } from "../gen/meridian/featurestatus/v1/feature_status_pb.js";
import type { OperationExamples, Parameter, RestDocs, Schema } from "../transport/rest/openapi.js";
import { OPAQUE_ID, OPAQUE_ID_RULE } from "../kernel/ids.js";
import type { ServiceRegistry } from "../transport/service-registry.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./listings/listing-params.js";
import { BODY_MAX, MESSAGE_TYPES, TITLE_MAX } from "./messages/message-fields.js";
import { EXPIRIES, SORT_BYS, SORT_ORDERS } from "./messages/message-store.js";
import { AUDIENCE_MAX, MAX_AUDIENCES } from "../kernel/audiences.js";
import { GLOB_MAX, MAX_PATHS, PATH_MAX } from "./messages/targeting.js";
import { MAX_TRANSLATIONS, TAG_MAX } from "./messages/languages.js";

const SSE =
  'Server-Sent Events: `event: messages` with `data: {"data": [message...]}`, the active messages the caller may see, at once and again whenever that set changes (by a write on any replica, or by the clock); each event\'s id names its set; a `: heartbeat` comment when quiet. Beyond MERIDIAN_MAX_WATCHERS streams, 503; beyond MERIDIAN_MAX_WATCHERS_PER_CLIENT of one credential and address, 429.';

const PKG = "meridian.featurestatus.v1";
const CREATE_BODY = `${PKG}.CreateMessageFields`;
const UPDATE_BODY = `${PKG}.UpdateMessageFields`;

/** A filter or order of the listings: one of `values`, in any case (D19). */
const caseless = (values: readonly string[], fallback: string, what: string): Schema => ({
  type: "string",
  enum: [...values],
  default: fallback,
  description: `${what}. Case is ignored: ${values[0].toLowerCase()} is ${values[0]}.`,
});

/** A BCP 47 tag's shape (D62; the server checks the grammar itself, Intl.getCanonicalLocales). */
const TAG: Schema = { type: "string", minLength: 2, maxLength: TAG_MAX, pattern: "^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$" };
const AUDIENCE: Schema = { type: "string", minLength: 1, maxLength: AUDIENCE_MAX };
const GLOB: Schema = { type: "string", minLength: 1, maxLength: GLOB_MAX };
const TRANSLATION_IN: Schema = {
  type: "object",
  required: ["title"],
  properties: {
    title: { type: "string", description: "As the default title: plain text, checked and cleaned the same way." },
    body: { type: "string", description: "As the default body: the allowed HTML subset. Absent: empty." },
  },
  additionalProperties: false,
};
const AUDIENCES_DOC = `Whom the message is for: it is listed and streamed only to callers holding one of these audiences (a token's groups or roles claims, an API key's audiences); BackOffice sees every message. At most ${MAX_AUDIENCES}; empty: everyone.`;
const PATHS_DOC = `On which pages: globs on the page path (* within a segment, ** across segments, ?, [classes], {a,b}); a listing or stream that names a path gets the message only if one matches. At most ${MAX_PATHS}; empty: every page.`;
const TRANSLATIONS_DOC = `The title and body in other languages, by BCP 47 tag (de, de-CH), each checked as the default ones; at most ${MAX_TRANSLATIONS}. Listings choose one by Accept-Language or lang.`;

/** The schema facts of the message fields, by `Message.field`, from the rules of D15-D21. */
const FACTS: Record<string, Schema> = {
  "MessageFields.type": { enum: [...MESSAGE_TYPES], description: `The severity: ${MESSAGE_TYPES.join(", ")}, spelled exactly so.` },
  "MessageFields.title": {
    description: `Plain text: markup is removed. At most ${TITLE_MAX} characters as a reader sees them (a character reference such as &lt; counts as one), not empty once markup is removed.`,
  },
  "MessageFields.body": {
    description: `HTML, kept to the allowed subset (links only https: and mailto:). At most ${BODY_MAX.toLocaleString("en")} characters as a reader sees them. Absent on create: empty.`,
  },
  "MessageFields.start_date": {
    format: "date-time",
    description:
      "When the message becomes active: an RFC 3339 date-time with Z or an offset (one without a zone is refused), stored in UTC to the second.",
  },
  "MessageFields.expiring_date": { format: "date-time", description: "When the message expires: as startDate, and after it." },
  "MessageFields.feature_id": {
    deprecated: true,
    description:
      "Ignored: a message belongs to the feature of its path, or is global. Accepted so that a body carrying it is not refused; do not send it.",
  },
  ...Object.fromEntries(
    ["id", "version", "language", "dismissed"].map((name) => [
      `MessageFields.${name}`,
      {
        deprecated: true,
        description:
          "Ignored: what only a read answers, accepted so that a message read back can be sent back unchanged. If-Match is the precondition.",
      },
    ]),
  ),
  "MessageFields.audiences": {
    items: AUDIENCE,
    maxItems: MAX_AUDIENCES,
    description: `${AUDIENCES_DOC} On update, absent keeps them and [] clears them.`,
  },
  "MessageFields.paths": { items: GLOB, maxItems: MAX_PATHS, description: `${PATHS_DOC} On update, absent keeps them and [] clears them.` },
  "MessageFields.translations": {
    maxProperties: MAX_TRANSLATIONS,
    propertyNames: TAG,
    additionalProperties: TRANSLATION_IN,
    description: `${TRANSLATIONS_DOC} On update, the object replaces every translation; {} removes them.`,
  },
  "Message.audiences": {
    items: AUDIENCE,
    maxItems: MAX_AUDIENCES,
    description: `${AUDIENCES_DOC} Shown to BackOffice only (empty for others).`,
  },
  "Message.paths": { items: GLOB, maxItems: MAX_PATHS, description: `${PATHS_DOC} Shown to BackOffice only (empty for others).` },
  "Message.translations": {
    maxProperties: MAX_TRANSLATIONS,
    propertyNames: TAG,
    description: `${TRANSLATIONS_DOC} Shown to BackOffice only (empty for others).`,
  },
  "Message.language": {
    ...TAG,
    description:
      "The language of title and body as answered: a key of the message's translations, chosen by lang or Accept-Language; null for the default text (also in reads by id and write answers, which give the stored message).",
  },
  "Message.type": { enum: [...MESSAGE_TYPES] },
  "Message.version": { minimum: 1 },
  "Message.start_date": { format: "date-time", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$" },
  "Message.expiring_date": { format: "date-time", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$" },
  "AuditEntry.at": { format: "date-time" },
  "AuditEntry.action": { enum: ["create", "update", "delete", "cleanup"] },
  "ListMessageAuditRequest.from": {
    format: "date-time",
    description: "Entries at or after this RFC 3339 date-time (with Z or an offset).",
  },
  // D47: the precondition as a field of the request, where gRPC and Connect callers' generated code types it (If-Match is
  // untyped metadata there); every field outside a route's path and body is a query parameter (google.api.http), so REST takes it too.
  ...Object.fromEntries(
    ["UpdateFeatureMessageRequest", "UpdateGlobalMessageRequest", "DeleteFeatureMessageRequest", "DeleteGlobalMessageRequest"].map(
      (request) => [
        `${request}.etag`,
        {
          description:
            "The message's ETag as last read, a precondition as If-Match is (a stale one is a 412). It is the request's etag field, which gRPC and Connect callers set in the message their generated code types; REST takes every field outside the path and body as a query parameter, so it works here too, and wins over If-Match when both are sent. REST callers should send If-Match.",
        },
      ],
    ),
  ),
  "ListMessageAuditRequest.to": {
    format: "date-time",
    description: "Entries at or before this RFC 3339 date-time (with Z or an offset), its whole second included.",
  },
};

/**
 * A page's size (D21). A size above the largest is answered with the largest
 * page, not refused, so the schema has no maximum: a maximum would make such
 * a request look invalid. Below 1 is refused.
 */
const LIMIT: Schema = {
  minimum: 1,
  default: DEFAULT_LIMIT,
  description: `Entries per page: default ${DEFAULT_LIMIT}; a larger value than ${MAX_LIMIT.toLocaleString("en")} is answered with ${MAX_LIMIT.toLocaleString("en")} (clamped), one below 1 is refused.`,
};

const LISTING: Partial<Record<string, Schema>> = {
  expiry: caseless(EXPIRIES, "NonExpired", "Which messages: All, NonExpired (active now), Expired or Pending (not yet started)"),
  sort_by: caseless(SORT_BYS, "StartDate", "The sort key (ties broken by id)"),
  sort_order: caseless(SORT_ORDERS, "Desc", "The order"),
  limit: LIMIT,
  cursor: { description: "The cursor of the previous page, for the next one (it is bound to the listing's feature, filter and order)." },
};

/** What a listing or stream says of its reader (D61, D62). */
const READER: Record<string, Schema> = {
  path: {
    maxLength: PATH_MAX,
    description:
      "The page the messages are for (a banner sends location.pathname): messages with paths are included only if one of their globs matches it.",
  },
  lang: { ...TAG, description: "The language to answer in, over Accept-Language: de-CH falls back to de, then to the default text." },
  audience: {
    items: AUDIENCE,
    description:
      "BackOffice only: the messages these audiences see (those for everyone and those naming one of them); without it, every message.",
  },
};

function fieldFacts(f: DescField): Schema | undefined {
  const message = f.parent.typeName;
  if (!message.startsWith(`${PKG}.`)) return undefined;
  const local = message.slice(PKG.length + 1);
  const listing = local === "ListFeatureMessagesRequest" || local === "ListGlobalMessagesRequest";
  const listed = listing ? LISTING[f.name] : undefined;
  if (listed) return listed;
  const read = listing || local === "WatchMessagesRequest" ? READER[f.name] : undefined;
  if (read) return read;
  if (local === "ListMessageAuditRequest" && f.name === "limit") return LIMIT;
  // Feature ids (D18), wherever one is given or answered, but in a message body, where it is ignored.
  if (f.name === "feature_id" && local !== "MessageFields")
    return { pattern: OPAQUE_ID.source, description: `A feature id: ${OPAQUE_ID_RULE}.` };
  return FACTS[`${local}.${f.name}`];
}

// Examples: a feature's message, a global one, and what the operations send and answer.
const DRAFT = {
  type: "Warning",
  title: "Maintenance tonight",
  body: "<p>Orders are paused from <b>22:00</b> to 23:00 UTC.</p>",
  startDate: "2026-03-01T20:00:00Z",
  expiringDate: "2026-03-01T23:00:00Z",
};
const MESSAGE = {
  id: 42,
  featureId: "orders",
  ...DRAFT,
  dismissible: true,
  dismissed: false,
  version: 1,
  audiences: [],
  paths: [],
  translations: {},
  language: null,
};
const GLOBAL = {
  ...MESSAGE,
  id: 43,
  featureId: null,
  type: "Informational",
  title: "New console",
  body: '<p>See <a href="https://example.com/console">the console</a>.</p>',
};
// D61, D62: for staff on the order pages, in German too.
const TARGETED_DRAFT = {
  ...DRAFT,
  audiences: ["staff"],
  paths: ["/orders/**"],
  translations: { de: { title: "Wartung heute Abend", body: "<p>Bestellungen ruhen von <b>22:00</b> bis 23:00 UTC.</p>" } },
};
const TARGETED = { ...MESSAGE, ...TARGETED_DRAFT };
const PATCH = { title: "Maintenance tonight, 22:00 to 23:30", expiringDate: "2026-03-01T23:30:00Z" };
const PATCHED = { ...MESSAGE, ...PATCH, version: 2 };
const CURSOR = "AZ2L8f3x0p4Q9mJb";
const EXAMPLES: Record<string, OperationExamples> = {
  ListFeatureMessages: {
    parameters: { feature_id: "orders", expiry: "All", limit: 50 },
    response: { data: [MESSAGE, GLOBAL], cursor: CURSOR },
  },
  ListGlobalMessages: { parameters: { sortBy: "ExpiringDate", sortOrder: "Asc" }, response: { data: [GLOBAL], cursor: null } },
  CreateFeatureMessage: { parameters: { feature_id: "orders" }, request: TARGETED_DRAFT, response: TARGETED },
  CreateGlobalMessage: {
    request: { type: GLOBAL.type, title: GLOBAL.title, body: GLOBAL.body, startDate: GLOBAL.startDate, expiringDate: GLOBAL.expiringDate },
    response: GLOBAL,
  },
  UpdateFeatureMessage: { parameters: { feature_id: "orders", message_id: 42, "if-match": '"42.1"' }, request: PATCH, response: PATCHED },
  UpdateGlobalMessage: {
    parameters: { message_id: 43, "if-match": '"43.1"' },
    request: { title: "The new console" },
    response: { ...GLOBAL, title: "The new console" },
  },
  DeleteFeatureMessage: { parameters: { feature_id: "orders", message_id: 42, "if-match": '"42.2"' } },
  DeleteGlobalMessage: { parameters: { message_id: 43 } },
  GetFeatureMessage: { parameters: { feature_id: "orders", message_id: 42 }, response: MESSAGE },
  DismissFeatureMessage: { parameters: { feature_id: "orders", message_id: 42 } },
  DismissGlobalMessage: { parameters: { message_id: 43 } },
  WatchFeatureMessagesSse: {
    parameters: { feature_id: "orders" },
    response: `id: 3nq8Qw1sXh0bT5rYk2LmZa\nevent: messages\ndata: ${JSON.stringify({ data: [MESSAGE, GLOBAL] })}\n\n`,
  },
  WatchGlobalMessagesSse: { response: `id: Vb7kP0qW2nR4sT6uX8yZ1a\nevent: messages\ndata: ${JSON.stringify({ data: [GLOBAL] })}\n\n` },
  PreviewMessage: {
    request: { title: "Pause <script>alert(1)</script>& resume", body: '<p onclick="x()">Soon</p>' },
    response: {
      type: null,
      title: "Pause & resume",
      body: "<p>Soon</p>",
      startDate: null,
      expiringDate: null,
      audiences: null,
      paths: null,
      translations: null,
      dismissible: null,
    },
  },
  ListMessageAudit: {
    parameters: { messageId: 42, limit: 20 },
    response: {
      data: [
        {
          id: "7",
          at: "2026-02-27T09:14:03.512Z",
          action: "update",
          messageId: 42,
          featureId: "orders",
          clientId: "console",
          keyId: "k7Hq2",
          issuer: null,
          subject: null,
          before: MESSAGE,
          after: PATCHED,
        },
      ],
      cursor: null,
    },
  },
};

const ACCEPT_LANGUAGE: Parameter = {
  name: "accept-language",
  in: "header",
  description:
    "the reader's languages with q-values: each message in its most preferred translation (de-CH falls back to de), else its default text; the lang parameter overrides it. Listings name the languages chosen in Content-Language",
  schema: { type: "string" },
};

export function documentFeatureStatusRest(registry: ServiceRegistry): void {
  const writes = (method: string) => method === "PATCH" || method === "DELETE";
  const LISTINGS = new Set(["ListFeatureMessages", "ListGlobalMessages"]);
  const CREATES = new Set(["CreateFeatureMessage", "CreateGlobalMessage"]);
  /** D47: the answers that carry an ETag (a message as written or read, a listing page); D62: those that say their languages. */
  const ETAGGED = new Set([...LISTINGS, ...CREATES, "UpdateFeatureMessage", "UpdateGlobalMessage", "GetFeatureMessage"]);
  const LANGUAGES = new Set([...LISTINGS, "GetFeatureMessage"]);
  const DISMISSALS = new Set(["DismissFeatureMessage", "DismissGlobalMessage"]);
  registry.documentRest(FeatureStatusService, {
    tag: {
      name: "Feature status messages",
      description: "Time-bound notices for one feature, or for every feature (global messages): listed, written, watched live and audited.",
    },
    fields: fieldFacts,
    requestBodies: {
      CreateFeatureMessage: {
        name: CREATE_BODY,
        required: ["type", "title", "startDate", "expiringDate"],
        description: "A new message: type, title, startDate and expiringDate are required, body is empty when absent.",
      },
      CreateGlobalMessage: {
        name: CREATE_BODY,
        required: ["type", "title", "startDate", "expiringDate"],
        description: "A new message: type, title, startDate and expiringDate are required, body is empty when absent.",
      },
      UpdateFeatureMessage: {
        name: UPDATE_BODY,
        description: "The fields to change; absent fields keep their value. The message so merged is checked as a new one.",
      },
      UpdateGlobalMessage: {
        name: UPDATE_BODY,
        description: "The fields to change; absent fields keep their value. The message so merged is checked as a new one.",
      },
      PreviewMessage: {
        name: UPDATE_BODY,
        description: "The fields to change; absent fields keep their value. The message so merged is checked as a new one.",
      },
    },
    examples: EXAMPLES,
    headers: (route) =>
      writes(route.httpMethod)
        ? [
            {
              name: "if-match",
              in: "header",
              description: "the ETag of the message as last read: the write is refused with 412 if it changed since",
              schema: { type: "string" },
            },
          ]
        : route.streamsHttpBody
          ? [
              {
                name: "last-event-id",
                in: "header",
                description: "the id of the last event received: no first event while the set is still that one",
                schema: { type: "string" },
              },
              ACCEPT_LANGUAGE,
            ]
          : LISTINGS.has(route.method.name)
            ? [
                {
                  name: "if-none-match",
                  in: "header",
                  description: "the ETag of a listing already held: 304 while it is still the answer",
                  schema: { type: "string" },
                },
                ACCEPT_LANGUAGE,
              ]
            : [],
    answerHeaders: (route) => {
      const ok = [
        ...(ETAGGED.has(route.method.name) ? (["ETag"] as const) : []),
        ...(LANGUAGES.has(route.method.name) ? (["Content-Language"] as const) : []),
      ];
      return {
        [String(route.successStatus)]: ok,
        ...(LISTINGS.has(route.method.name) ? { "304": ok } : {}),
        ...(writes(route.httpMethod) ? { "412": ["ETag"] } : {}),
      };
    },
    responses: (route): ReturnType<NonNullable<RestDocs["responses"]>> =>
      route.streamsHttpBody
        ? {
            "429": {
              description:
                "this credential holds as many streams from this address as it may (MERIDIAN_MAX_WATCHERS_PER_CLIENT, reason CLIENT_WATCHERS_EXHAUSTED): close one, or retry after Retry-After seconds",
              problem: true,
            },
          }
        : writes(route.httpMethod)
          ? {
              "412": {
                description: "the message changed since the ETag of If-Match; its current ETag is in the answer's ETag header",
                problem: true,
              },
            }
          : LISTINGS.has(route.method.name)
            ? { "304": { description: "the listing is still the one of If-None-Match" } }
            : CREATES.has(route.method.name)
              ? { "507": { description: "every message id has been used (reason MESSAGE_IDS_EXHAUSTED)", problem: true } }
              : DISMISSALS.has(route.method.name)
                ? { "409": { description: "the message is marked not dismissible (reason MESSAGE_NOT_DISMISSIBLE)", problem: true } }
                : {},
    streamedJson: {
      WatchFeatureMessagesSse: { mediaType: "text/event-stream", schema: { type: "string" }, description: SSE },
      WatchGlobalMessagesSse: { mediaType: "text/event-stream", schema: { type: "string" }, description: SSE },
    },
  });
}
