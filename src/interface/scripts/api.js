// The API: api() calls the node, JSON in and JSON out, and throws its refusal as
// an ApiError. An expired session is renewed once and the request retried; one
// that cannot go on shows the sign-in form and throws SessionOver. send() and
// refusalOf() are the bare request and refusal, for signing in.

import { hint, me, showSignIn } from "./session.js";

/** A refusal from the node: `{code, message, reason, fix}` and the HTTP status. */
export class ApiError extends Error {
  constructor(status, refusal) {
    super(refusal.message);
    this.name = "ApiError";
    this.status = status;
    this.code = refusal.code;
    this.reason = refusal.reason;
    this.fix = refusal.fix;
  }
}

/** Thrown once the session cannot go on; the sign-in form is already showing. */
export class SessionOver extends Error {}

// Codes that mean "this request carried no usable session". Only an expired
// access token is worth renewing: the access cookie outlives its token (it
// lasts as long as the session), so an expired token is always presented and
// answered with this code; anything else means there is no session to renew.
const EXPIRED = "access_token_expired";
const SESSION_CODES = new Set([EXPIRED, "session_ended", "not_signed_in", "invalid_credential"]);

export async function send(method, path, body) {
  const init = { method, credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, {
      code: "network_error",
      message: "The node could not be reached.",
      reason: String(error?.message ?? error),
      fix: "Check the connection and try again.",
    });
  }
}

/** Reads a refusal body, or describes an answer that is not one. */
export async function refusalOf(response) {
  const text = await response.text();
  try {
    const error = JSON.parse(text)?.error;
    if (error && typeof error.code === "string") return error;
  } catch {}
  return {
    code: "unexpected_answer",
    message: `${`The node answered ${response.status} ${response.statusText}`.trim()}.`,
    reason: "The answer was not one the interface understands.",
    fix: "Try again; if it keeps happening, tell the node's operator.",
  };
}

let renewal = null;

/**
 * Exchanges the refresh cookie for fresh cookies, once however many requests
 * ask at a time. Answers null when the session goes on, or the refusal.
 */
function renewSession() {
  renewal ??= (async () => {
    try {
      const response = await send("POST", "/api/sessions/refresh");
      if (response.ok) return null;
      const refusal = await refusalOf(response);
      // Another tab refreshed the same token a moment ago: the browser already
      // holds its new cookies.
      return refusal.code === "refresh_raced" ? null : refusal;
    } finally {
      renewal = null;
    }
  })();
  return renewal;
}

/**
 * Calls the API: JSON in, JSON out; a refusal is thrown as an ApiError. A
 * session that has expired is renewed once and the request retried; one that
 * cannot go on shows the sign-in form and throws SessionOver.
 */
export async function api(method, path, body) {
  let response = await send(method, path, body);
  if (response.status === 401) {
    const refusal = await refusalOf(response);
    if (!SESSION_CODES.has(refusal.code)) throw new ApiError(401, refusal);
    const failure = refusal.code === EXPIRED ? await renewSession() : refusal;
    if (failure) sessionOver(failure);
    response = await send(method, path, body);
    if (response.status === 401) {
      const again = await refusalOf(response);
      if (SESSION_CODES.has(again.code)) sessionOver(again);
      throw new ApiError(401, again);
    }
  }
  if (!response.ok) throw new ApiError(response.status, await refusalOf(response));
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// Refusals that say something a person should read when their session ends;
// the others are written for API clients and would only puzzle them.
const TELLING = new Set(["session_ended", "refresh_token_reused"]);

function sessionOver(refusal) {
  const hadSession = me !== null || hint.get();
  hint.set(false);
  if (TELLING.has(refusal.code)) showSignIn({ title: "You have been signed out.", refusal });
  else showSignIn(hadSession ? { text: "Your session has ended. Sign in again to continue." } : null);
  throw new SessionOver(refusal.message);
}

export const query = (parameters) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(parameters)) if (value !== undefined && value !== null) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
};
export const segment = encodeURIComponent;
