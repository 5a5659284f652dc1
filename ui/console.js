// The operator console (D49): sign in with an API key or a bearer token (kept
// in sessionStorage only), list messages, create, edit and delete them with a
// live preview of the body as it will be shown, the server's field errors
// beside their fields, a message's audit trail, and a clear word when someone
// else changed the message first (412: edits send If-Match, D47). The editor
// holds a message's audiences and page globs (D61) and its translations (D62),
// the preview shows any one of its languages; each row says who the message is
// for, and a message's webhook deliveries (D63) are a click away. A credential
// is tried before the signed-in view opens: a refused one keeps the sign-in
// form, with the server's reason beside it. Dates are shown in the operator's
// time zone, the UTC value on hover; each row says whether its message is
// live, pending or expired. Plain DOM:
// text is set as text; the preview is the server's sanitised body, shown
// through the banner's allowlist check.
import { bodyFragment } from "/ui/meridian-banner.js";
import { authHeaders, credential, refusal as refusalOf, showSignIn, signInForm } from "/ui/credential.js";

const $ = (id) => document.getElementById(id);

let cursor = null;
let editing = null; // { scope, id, etag } while editing an existing message

async function call(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    headers: { ...authHeaders(), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get("etag"), json: text ? JSON.parse(text) : undefined };
}

function notice(text, kind = "") {
  const n = $("notice");
  n.textContent = text;
  n.className = kind;
  n.hidden = !text;
}

/** Milliseconds since the epoch of an API date ("2030-01-01T00:00:00Z"; one without a zone is UTC too). */
const utc = (iso) => Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(iso) ? iso : `${iso}Z`);

// The operator's locale and time zone, with the zone's name so that no one reads it as UTC.
const WHEN = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" };
const LOCAL = new Intl.DateTimeFormat(undefined, WHEN);
// A webhook delivery's times: its retries are seconds apart.
const LOCAL_SECONDS = new Intl.DateTimeFormat(undefined, { ...WHEN, second: "2-digit" });

/** A date cell: local time as text, the UTC value on hover. */
function dateCell(row, iso, format = LOCAL) {
  const td = cell(row, "");
  if (!iso) return td;
  const at = new Date(utc(iso));
  const time = document.createElement("time");
  time.dateTime = at.toISOString();
  time.textContent = format.format(at);
  time.title = `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  td.append(time);
  return td;
}

/** live, pending or expired, by the listing's own rule (D19): live from its start until, not including, its expiry. */
function status(m, now = Date.now()) {
  if (now < utc(m.startDate)) return "pending";
  return utc(m.expiringDate) <= now ? "expired" : "live";
}

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text ?? "";
  row.append(td);
  return td;
}

function button(label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

const filters = () => Object.fromEntries(new FormData($("filters")));
const base = (feature) => (feature ? `/api/admin/feature/${encodeURIComponent(feature)}/message` : "/api/admin/feature/message");

/** One page of the listing the filters ask for. */
function page(more) {
  const f = filters();
  const q = new URLSearchParams({ expiry: f.expiry, sortBy: f.sortBy, sortOrder: f.sortOrder });
  // D61: what one audience sees, on one page (BackOffice sees every message otherwise).
  for (const name of ["audience", "path"]) if (f[name].trim() !== "") q.set(name, f[name].trim());
  if (more && cursor) q.set("cursor", cursor);
  return call("GET", `${base(f.feature)}?${q}`);
}

async function list(more = false) {
  const r = await page(more);
  if (r.status === 401) {
    // revoked or expired meanwhile
    signOut(refusal(r));
    return;
  }
  if (r.status !== 200) {
    notice(r.json?.detail ?? `listing failed (${r.status})`, "conflict");
    return;
  }
  show(r.json, more);
}

function show(listing, more) {
  const body = $("messages").tBodies[0];
  if (!more) body.replaceChildren();
  for (const m of listing.data) {
    const row = document.createElement("tr");
    row.dataset.id = String(m.id);
    cell(row, String(m.id));
    cell(row, m.type);
    // A listing answers in the operator's language (D62): say so when that is not the default text.
    const title = cell(row, m.title);
    if (m.language) title.title = `shown in ${m.language}`;
    row.dataset.status = status(m);
    cell(row, row.dataset.status).className = `status ${row.dataset.status}`;
    dateCell(row, m.startDate);
    dateCell(row, m.expiringDate);
    targetingCell(row, m);
    const actions = cell(row, "");
    const scope = m.featureId;
    actions.append(
      button("Edit", () => edit(scope, m.id)),
      " ",
      button("Delete", () => remove(scope, m.id)),
      " ",
      button("Audit", () => audit(m.id)),
      " ",
      button("Deliveries", () => deliveries(m.id)),
    );
    body.append(row);
  }
  cursor = listing.cursor;
  $("more").hidden = !cursor;
}

/** A list shown briefly: its first few entries, and how many more (the row's cell has them all on hover). */
function brief(list, max = 3) {
  return list.length <= max ? list.join(", ") : `${list.slice(0, max).join(", ")} +${list.length - max} more`;
}

/** Who a message is for (D61) and in which languages (D62), as the BackOffice listing gives them. */
function targetingCell(row, m) {
  const td = cell(row, "");
  td.className = "targeting";
  const audiences = m.audiences ?? [];
  const paths = m.paths ?? [];
  const languages = Object.keys(m.translations ?? {});
  const parts = [
    ["audiences", audiences.length ? `audiences: ${brief(audiences)}` : "everyone"],
    ["paths", paths.length ? `pages: ${brief(paths)}` : "every page"],
    ["languages", languages.length ? `languages: ${brief(languages)}` : "default text only"],
  ];
  for (const [part, text] of parts) {
    const span = document.createElement("span");
    span.dataset.part = part;
    span.textContent = text;
    td.append(span);
  }
  td.title = [
    `audiences: ${audiences.join(", ") || "everyone"}`,
    `pages: ${paths.join(", ") || "every page"}`,
    `languages: ${languages.join(", ") || "the default text only"}`,
  ].join("\n");
}

/** A textarea's lines as a list: each trimmed, blank ones left out. */
const lines = (text) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

/**
 * Where the server's error about `key` shows, and in what words: an entry of
 * a list (paths[2]) beside its list, naming the entry as sent; a field with no
 * place of its own (translations.de.x) beside the nearest one that has one.
 */
function placed(key, fields, sent) {
  const item = /^(audiences|paths)\[(\d+)\]$/.exec(key);
  if (item) {
    const entry = sent[item[1]]?.[Number(item[2])];
    return { field: item[1], say: (m) => (entry === undefined ? `${key}: ${m}` : `${JSON.stringify(entry)} ${m}`) };
  }
  let field = key;
  while (!fields.has(field) && field.includes(".")) field = field.slice(0, field.lastIndexOf("."));
  return { field, say: (m) => (field === key ? m : `${key}: ${m}`) };
}

/** The server's errors beside their fields; `only` names the fields an answer speaks for, `sent` is what it answered. */
function showErrors(errors = {}, only, sent = {}) {
  const spans = [...document.querySelectorAll("#editor .error[data-field]")];
  const shown = new Map(spans.map((s) => [s.dataset.field, []]));
  for (const [key, messages] of Object.entries(errors)) {
    const { field, say } = placed(key, shown, sent);
    shown.get(field)?.push(...messages.map(say)); // a field the editor has no place for is in the notice's detail
  }
  for (const span of spans)
    if (only === undefined || only.includes(span.dataset.field)) span.textContent = shown.get(span.dataset.field).join("; ");
}

// Translations (D62): a block per language, in the order added, each with its
// title, body and error places named as the server names them
// (translations.de.title).
const translationBlocks = () => [...$("translation-list").children];
const part = (block, name) => block.querySelector(`[data-part="${name}"]`);

function errorPlace(field) {
  const span = document.createElement("span");
  span.className = "error";
  span.dataset.field = field;
  return span;
}

function labelled(text, control) {
  const label = document.createElement("label");
  label.append(text, " ", control);
  return label;
}

function addTranslation(tag, text = { title: "", body: "" }) {
  const block = document.createElement("fieldset");
  block.className = "translation";
  block.dataset.language = tag;
  const legend = document.createElement("legend");
  legend.textContent = tag;
  const title = document.createElement("input");
  title.dataset.part = "title";
  title.value = text.title;
  const body = document.createElement("textarea");
  body.dataset.part = "body";
  body.rows = 3;
  body.value = text.body;
  for (const input of [title, body]) input.addEventListener("input", () => previewIn(tag));
  const field = `translations.${tag}`;
  block.append(
    legend,
    errorPlace(field),
    labelled("Title", title),
    errorPlace(`${field}.title`),
    labelled("Body (HTML)", body),
    errorPlace(`${field}.body`),
    button(`Remove ${tag}`, () => {
      block.remove();
      languagesChanged();
    }),
  );
  $("translation-list").append(block);
  return block;
}

/** The language tag typed, as a new block (or the one it already has: the server would refuse a second de, or DE). */
function addLanguage() {
  const input = $("new-language");
  const tag = input.value.trim();
  if (tag === "") return;
  const block = translationBlocks().find((b) => b.dataset.language.toLowerCase() === tag.toLowerCase()) ?? addTranslation(tag);
  input.value = "";
  languagesChanged();
  part(block, "title").focus();
  previewIn(tag);
}

/** The preview's language picker, after a language was added or removed. */
function languagesChanged() {
  const select = $("preview-language");
  const chosen = select.value;
  const option = (value, text) => {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    return o;
  };
  const tags = translationBlocks().map((b) => b.dataset.language);
  select.replaceChildren(option("", "the default text"), ...tags.map((t) => option(t, t)));
  select.value = tags.includes(chosen) ? chosen : "";
  preview();
}

const translationsInEditor = () =>
  Object.fromEntries(translationBlocks().map((b) => [b.dataset.language, { title: part(b, "title").value, body: part(b, "body").value }]));

/** The title and body the preview shows (the default text or the chosen translation's), and the prefix of their error places. */
function previewed() {
  const tag = $("preview-language").value;
  const block = translationBlocks().find((b) => b.dataset.language === tag);
  if (block) return { prefix: `translations.${tag}.`, title: part(block, "title").value, body: part(block, "body").value };
  const { elements } = $("editor");
  return { prefix: "", title: elements.title.value, body: elements.body.value };
}

function previewIn(tag) {
  $("preview-language").value = tag;
  preview();
}

// The preview is the server's: the title and body, in the chosen language, as
// a write would store them (sanitised: a translation's text is checked and
// cleaned as the default's is), asked for as the operator types (a moment
// after the last key).
let previewTimer;
let previewAsked = 0;
function preview() {
  clearTimeout(previewTimer);
  const asked = ++previewAsked;
  previewTimer = setTimeout(async () => {
    const { prefix, title, body } = previewed();
    // A title not yet typed is not held against the body: that is the save's to say.
    const sent = title.trim() === "" ? { body } : { title, body };
    const r = await call("POST", "/api/admin/feature/message/preview", sent);
    if (asked !== previewAsked) return; // typed on meanwhile
    // A preview judges what it was sent alone: it must not clear what a save said of the other fields.
    const errors = Object.fromEntries(Object.entries(r.status === 200 ? {} : (r.json?.errors ?? {})).map(([k, v]) => [prefix + k, v]));
    showErrors(
      errors,
      Object.keys(sent).map((k) => prefix + k),
    );
    $("preview-title").textContent = r.status === 200 ? (r.json.title ?? "") : "";
    $("preview").replaceChildren(r.status === 200 ? bodyFragment(r.json.body ?? "") : "");
  }, 150);
}

function openEditor(title, values) {
  const form = $("editor");
  $("editor-title").textContent = title;
  for (const name of ["type", "title", "body", "startDate", "expiringDate"]) form.elements[name].value = values[name] ?? "";
  // Connect's JSON (getMessage) leaves a false field and an empty list out.
  form.elements.mustRead.checked = "id" in values && values.dismissible !== true;
  form.elements.audiences.value = (values.audiences ?? []).join("\n");
  form.elements.paths.value = (values.paths ?? []).join("\n");
  $("translation-list").replaceChildren();
  $("new-language").value = "";
  for (const [tag, t] of Object.entries(values.translations ?? {})) addTranslation(tag, { title: t.title ?? "", body: t.body ?? "" });
  $("preview-language").value = "";
  languagesChanged();
  showErrors();
  form.hidden = false;
}

/** One message and its ETag, by the Connect protocol (global messages have no REST path for it). */
function getMessage(scope, id) {
  const rpc = `/meridian.featurestatus.v1.FeatureStatusService/${scope === null ? "GetGlobalMessage" : "GetFeatureMessage"}`;
  return call("POST", rpc, scope === null ? { messageId: id } : { featureId: scope, messageId: id });
}

async function edit(scope, id) {
  const r = await getMessage(scope, id);
  if (r.status !== 200) {
    notice(r.json?.message ?? `could not load message ${id}`, "conflict");
    return;
  }
  editing = { scope, id, etag: r.etag };
  openEditor(`Edit message ${id}`, r.json);
}

async function save(event) {
  event.preventDefault();
  const form = $("editor");
  const { elements } = form;
  const fields = {
    ...Object.fromEntries(["type", "title", "body", "startDate", "expiringDate"].map((name) => [name, elements[name].value])),
    // D63: a Critical message may be marked not dismissible.
    dismissible: !elements.mustRead.checked,
    // D61, D62: sent whole, they replace what was stored ([] and {} clear them).
    audiences: lines(elements.audiences.value),
    paths: lines(elements.paths.value),
    translations: translationsInEditor(),
  };
  const r = editing
    ? await call("PATCH", `${base(editing.scope)}/${editing.id}`, fields, editing.etag ? { "if-match": editing.etag } : {})
    : await call("POST", base(filters().feature), fields);
  if (r.status === 412) {
    notice(`Someone else changed message ${editing.id} first. It has been reloaded with their changes; yours were not saved.`, "conflict");
    return edit(editing.scope, editing.id);
  }
  if (r.status >= 400) {
    showErrors(r.json?.errors, undefined, fields);
    notice(r.json?.detail ?? `not saved (${r.status})`, "conflict");
    return;
  }
  notice(editing ? `Message ${r.json.id} saved.` : `Message ${r.json.id} published.`);
  editing = null;
  form.hidden = true;
  await list();
}

async function remove(scope, id) {
  const current = await getMessage(scope, id);
  if (current.status !== 200) {
    notice(current.json?.message ?? `no message ${id}`, "conflict");
    return;
  }
  const r = await call("DELETE", `${base(scope)}/${id}`, undefined, { "if-match": current.etag });
  if (r.status === 412) notice(`Someone else changed message ${id} first; it was not deleted.`, "conflict");
  else if (r.status !== 204) notice(r.json?.detail ?? `not deleted (${r.status})`, "conflict");
  else notice(`Message ${id} deleted.`);
  await list();
}

async function audit(id) {
  const r = await call("GET", `/api/admin/feature/message/audit?messageId=${id}`);
  if (r.status !== 200) {
    notice(r.json?.detail ?? `no audit trail (${r.status})`, "conflict");
    return;
  }
  const body = $("audit").querySelector("tbody");
  body.replaceChildren();
  for (const e of r.json.data) {
    const row = document.createElement("tr");
    dateCell(row, e.at);
    cell(row, e.action);
    cell(
      row,
      e.clientId === null
        ? "retention cleanup"
        : `${e.clientId} (${e.keyId ? `key ${e.keyId}` : `${e.issuer ?? "?"} / ${e.subject ?? "?"}`})`,
    );
    cell(row, e.before?.title ?? "");
    cell(row, e.after?.title ?? "");
    body.append(row);
  }
  $("audit").hidden = false;
}

// A message's webhook deliveries (D63): the registered endpoints, then each
// one's log of this message, the newest DELIVERIES_SHOWN events: one bounded
// request per endpoint.
const DELIVERIES_SHOWN = 20;
let deliveriesOf = null; // the message whose deliveries are shown

async function deliveries(id) {
  deliveriesOf = id;
  const hooks = await call("GET", "/api/admin/feature/message/webhooks");
  if (hooks.status !== 200) {
    notice(hooks.json?.detail ?? `no webhooks to show (${hooks.status})`, "conflict");
    return;
  }
  const logs = await Promise.all(
    hooks.json.data.map((h) =>
      call("GET", `/api/admin/feature/message/webhooks/${encodeURIComponent(h.id)}/deliveries?messageId=${id}&limit=${DELIVERIES_SHOWN}`),
    ),
  );
  if (deliveriesOf !== id) return; // another message was chosen meanwhile
  $("deliveries-title").textContent = `Webhook deliveries of message ${id}`;
  $("deliveries-none").hidden = hooks.json.data.length > 0;
  $("webhooks").replaceChildren(...hooks.json.data.map((h, i) => webhookLog(h, logs[i])));
  $("deliveries").hidden = false;
}

function paragraph(text, className = "") {
  const p = document.createElement("p");
  p.textContent = text;
  p.className = className;
  return p;
}

/** One endpoint and its deliveries of the message: event, status, HTTP answer, attempts, times, error. */
function webhookLog(hook, r) {
  const box = document.createElement("div");
  box.className = "webhook";
  box.dataset.webhook = hook.id;
  const heading = document.createElement("h3");
  heading.textContent = hook.url;
  box.append(heading, paragraph(`events: ${hook.events.join(", ")}`, "hint"));
  if (r.status !== 200) {
    box.append(paragraph(r.json?.detail ?? `its delivery log could not be read (${r.status})`, "error"));
    return box;
  }
  if (r.json.data.length === 0) {
    box.append(paragraph("No deliveries of this message.", "none"));
    return box;
  }
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  for (const h of ["Event", "Status", "HTTP", "Attempts", "Happened", "Last tried", "Next try", "Error"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.append(th);
  }
  const body = table.createTBody();
  for (const d of r.json.data) {
    const row = body.insertRow();
    row.dataset.event = d.event;
    row.dataset.status = d.status;
    cell(row, d.event);
    cell(row, d.status).className = `delivery ${d.status}`;
    cell(row, d.lastStatus == null ? "" : String(d.lastStatus));
    cell(row, String(d.attempts ?? 0));
    dateCell(row, d.createdAt, LOCAL_SECONDS);
    dateCell(row, d.lastAttemptAt, LOCAL_SECONDS);
    dateCell(row, d.nextAttemptAt, LOCAL_SECONDS);
    // Why it failed: no answer (timeout, refused), or the endpoint's own answer to a failed attempt.
    const failedAnswer = d.lastStatus != null && (d.lastStatus < 200 || d.lastStatus > 299) ? (d.lastAnswer ?? "") : "";
    cell(row, d.lastError ?? failedAnswer).className = "delivery-error";
  }
  box.append(table);
  if (r.json.data.length === DELIVERIES_SHOWN) box.append(paragraph(`The newest ${DELIVERIES_SHOWN} are shown.`, "hint"));
  return box;
}

function signedIn(yes) {
  $("sign-in").hidden = yes;
  $("app").hidden = !yes;
  $("sign-out").hidden = !yes;
}

/** Nothing of a previous session stays: no notice, no field error, no rows, no open editor or audit trail. */
function clearView() {
  notice("");
  showErrors();
  $("sign-in-error").textContent = "";
  $("messages").tBodies[0].replaceChildren();
  $("audit").querySelector("tbody").replaceChildren();
  $("audit").hidden = true;
  $("webhooks").replaceChildren();
  $("deliveries").hidden = true;
  deliveriesOf = null;
  $("translation-list").replaceChildren();
  $("editor").hidden = true;
  $("more").hidden = true;
  editing = null;
  cursor = null;
}

/** Why the server would not take the credential, in its own words. */
const refusal = (r) => refusalOf(r.status, r.json, "manage messages");

/** Back to the sign-in form, with `reason` beside it when there is one. */
function signOut(reason = "") {
  clearView();
  showSignIn($("sign-in"), reason);
  signedIn(false);
}

/** Opens the signed-in view only once the server has answered the stored credential's first listing. */
async function enter() {
  let r;
  try {
    r = await page(false);
  } catch (e) {
    signOut(`Could not reach the server (${e.message}).`);
    return;
  }
  if (r.status !== 200) {
    signOut(refusal(r));
    return;
  }
  clearView();
  signedIn(true);
  show(r.json, false);
}

function start() {
  signInForm($("sign-in"), "Kept in this tab only (sessionStorage), shared with the series explorer.", () => void enter());
  $("sign-out").addEventListener("click", () => signOut());
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    void list();
  });
  $("more").addEventListener("click", () => void list(true));
  $("new").addEventListener("click", () => {
    editing = null;
    const now = new Date();
    openEditor("New message", {
      type: "Informational",
      startDate: now.toISOString().slice(0, 19) + "Z",
      expiringDate: new Date(now.getTime() + 86_400_000).toISOString().slice(0, 19) + "Z",
    });
  });
  $("cancel").addEventListener("click", () => {
    editing = null;
    $("editor").hidden = true;
  });
  $("editor").addEventListener("submit", (event) => void save(event));
  for (const name of ["title", "body"]) $("editor").elements[name].addEventListener("input", () => previewIn(""));
  $("preview-language").addEventListener("change", preview);
  $("add-language").addEventListener("click", addLanguage);
  $("new-language").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault(); // adds the language; it does not save the message
    addLanguage();
  });
  $("deliveries-refresh").addEventListener("click", () => {
    if (deliveriesOf !== null) void deliveries(deliveriesOf);
  });
  if (credential()) void enter();
  else signOut();
}

start();
