// The operator console (D49): sign in with an API key or a bearer token (kept
// in sessionStorage only), list messages, create, edit and delete them with a
// live preview of the body as it will be shown, the server's field errors
// beside their fields, a message's audit trail, and a clear word when someone
// else changed the message first (412: edits send If-Match, D47). A credential
// is tried before the signed-in view opens: a refused one keeps the sign-in
// form, with the server's reason beside it. Dates are shown in the operator's
// time zone, the UTC value on hover; each row says whether its message is
// live, pending or expired. Plain DOM:
// text is set as text; the preview is the server's sanitised body, shown
// through the banner's allowlist check.
import { bodyFragment } from "/ui/meridian-banner.js";

const $ = (id) => document.getElementById(id);
const STORE = "meridian-console-credential";

let cursor = null;
let editing = null; // { scope, id, etag } while editing an existing message

function credential() {
  const saved = sessionStorage.getItem(STORE);
  return saved ? JSON.parse(saved) : null;
}

function authHeaders() {
  const c = credential();
  if (!c) return {};
  return c.kind === "token" ? { authorization: `Bearer ${c.value}` } : { "svc-open-api-key": c.value };
}

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
const LOCAL = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});

/** A date cell: local time as text, the UTC value on hover. */
function dateCell(row, iso) {
  const td = cell(row, "");
  if (!iso) return td;
  const at = new Date(utc(iso));
  const time = document.createElement("time");
  time.dateTime = at.toISOString();
  time.textContent = LOCAL.format(at);
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
    cell(row, m.title);
    row.dataset.status = status(m);
    cell(row, row.dataset.status).className = `status ${row.dataset.status}`;
    dateCell(row, m.startDate);
    dateCell(row, m.expiringDate);
    const actions = cell(row, "");
    const scope = m.featureId;
    actions.append(
      button("Edit", () => edit(scope, m.id)),
      " ",
      button("Delete", () => remove(scope, m.id)),
      " ",
      button("Audit", () => audit(m.id)),
    );
    body.append(row);
  }
  cursor = listing.cursor;
  $("more").hidden = !cursor;
}

/** The server's errors beside their fields; `only` names the one field an answer speaks for. */
function showErrors(errors = {}, only) {
  for (const span of document.querySelectorAll(".error")) {
    if (only === undefined || span.dataset.field === only) span.textContent = (errors[span.dataset.field] ?? []).join("; ");
  }
}

// The preview is the server's: the body as a write would store it (sanitised),
// asked for as the operator types (a moment after the last key).
let previewTimer;
function preview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(async () => {
    const body = $("editor").elements.body.value;
    const r = await call("POST", "/api/admin/feature/message/preview", { body });
    if ($("editor").elements.body.value !== body) return; // typed on meanwhile
    // A preview judges the body alone: it must not clear what a save said of the other fields.
    showErrors(r.status === 200 ? {} : r.json?.errors, "body");
    $("preview").replaceChildren(r.status === 200 ? bodyFragment(r.json.body ?? "") : "");
  }, 150);
}

function openEditor(title, values) {
  const form = $("editor");
  $("editor-title").textContent = title;
  for (const name of ["type", "title", "body", "startDate", "expiringDate"]) form.elements[name].value = values[name] ?? "";
  // Connect's JSON (getMessage) leaves a false field out: only true is there to read.
  form.elements.mustRead.checked = "id" in values && values.dismissible !== true;
  showErrors();
  preview();
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
  const data = new FormData(form);
  // D63: a Critical message may be marked not dismissible (an unchecked box is not in the form's data).
  const dismissible = !data.has("mustRead");
  data.delete("mustRead");
  const fields = { ...Object.fromEntries(data), dismissible };
  const r = editing
    ? await call("PATCH", `${base(editing.scope)}/${editing.id}`, fields, editing.etag ? { "if-match": editing.etag } : {})
    : await call("POST", base(filters().feature), fields);
  if (r.status === 412) {
    notice(`Someone else changed message ${editing.id} first. It has been reloaded with their changes; yours were not saved.`, "conflict");
    return edit(editing.scope, editing.id);
  }
  if (r.status >= 400) {
    showErrors(r.json?.errors);
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
  $("editor").hidden = true;
  $("more").hidden = true;
  editing = null;
  cursor = null;
}

/** Why the server would not take the credential, in its own words. */
function refusal(r) {
  const why = r.json?.detail ?? r.json?.message ?? r.json?.title;
  if (r.status === 401) return `This credential was refused${why ? `: ${why}` : ""}.`;
  if (r.status === 403) return `This credential may not manage messages${why ? `: ${why}` : ""}.`;
  return `Could not sign in (${r.status}${why ? `: ${why}` : ""}).`;
}

/** Back to the sign-in form, with `reason` beside it when there is one. */
function signOut(reason = "") {
  sessionStorage.removeItem(STORE);
  clearView();
  $("sign-in").elements.value.value = "";
  $("sign-in-error").textContent = reason;
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
  $("sign-in").addEventListener("submit", (event) => {
    event.preventDefault();
    const { kind, value } = Object.fromEntries(new FormData(event.target));
    sessionStorage.setItem(STORE, JSON.stringify({ kind, value: value.trim() }));
    void enter();
  });
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
  $("editor").elements.body.addEventListener("input", preview);
  if (credential()) void enter();
  else signOut();
}

start();
