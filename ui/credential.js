// The console's pages' one sign-in (D49, issue 43): the credential an operator
// gives, an API key or a bearer token, kept in this tab's sessionStorage under
// one name, so the console and the series explorer share it; the headers that
// carry it; the server's refusal in plain words; and the sign-in form itself,
// built here so both pages show the same fields. Text is set as text.

export const STORE = "meridian-console-credential";

/** The stored credential, { kind: "key" | "token", value }, or null. */
export function credential() {
  const saved = sessionStorage.getItem(STORE);
  if (!saved) return null;
  try {
    return JSON.parse(saved);
  } catch {
    return null;
  }
}

export function remember(kind, value) {
  sessionStorage.setItem(STORE, JSON.stringify({ kind, value: value.trim() }));
}

export function forget() {
  sessionStorage.removeItem(STORE);
}

/** The header that carries the stored credential (none without one). */
export function authHeaders() {
  const c = credential();
  if (!c) return {};
  return c.kind === "token" ? { authorization: `Bearer ${c.value}` } : { "svc-open-api-key": c.value };
}

/** Why the server would not take the credential, in its own words; `may` says what a 403 forbids ("manage messages"). */
export function refusal(status, json, may) {
  const why = json?.detail ?? json?.message ?? json?.title;
  if (status === 401) return `This credential was refused${why ? `: ${why}` : ""}.`;
  if (status === 403) return `This credential may not ${may}${why ? `: ${why}` : ""}.`;
  return `Could not sign in (${status}${why ? `: ${why}` : ""}).`;
}

function element(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/**
 * Fills `form` (an empty <form id="sign-in">) with the sign-in fields: the
 * credential's kind, its value, the button, an error line (#sign-in-error,
 * role alert) and `hint`. On submit the credential is stored and `entered()`
 * called.
 */
export function signInForm(form, hint, entered) {
  const kind = element("select", { name: "kind" }, new Option("API key", "key"), new Option("Bearer token", "token"));
  const value = element("input", { name: "value", type: "password", autocomplete: "off", required: true });
  form.replaceChildren(
    element("h2", { textContent: "Sign in" }),
    element("label", {}, "Credential ", kind),
    " ",
    element("label", {}, "Value ", value),
    " ",
    element("button", { type: "submit", textContent: "Sign in" }),
    element("p", { id: "sign-in-error", className: "error" }),
    element("p", { className: "hint", textContent: hint }),
  );
  form.querySelector("#sign-in-error").setAttribute("role", "alert");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    remember(kind.value, value.value);
    entered();
  });
}

/** Back to the sign-in form: the credential forgotten, the field emptied, `reason` beside it. */
export function showSignIn(form, reason = "") {
  forget();
  form.elements.value.value = "";
  form.querySelector("#sign-in-error").textContent = reason;
}
