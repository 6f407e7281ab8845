// The sign-in form (signInForm(): the page's and the dialog's), and signing
// in again over the page, when a session runs out while someone is working
// (issue 31: never lose work). Replacing the page with the sign-in
// form, as a first visit shows it, would throw away whatever they had typed;
// so when the session simply ran out (its refresh no longer honoured, its
// cookies gone), the sign-in is a dialog over the page, which stays as it
// was, and the person sends what they were sending once they are back.
//
// Whoever signs in must be the person the page was showing: anyone else is
// shown their own page from the start, never the last person's typing. A
// session ended on purpose (signed out elsewhere, a refresh token used twice)
// is not this: the page is replaced, as before.

import { h, labelled, uniqueId } from "./dom.js";
import { hint, me, setMe } from "./session.js";
import { api, ApiError, refusalOf, send } from "./api.js";
import { actionForm, success } from "./shared.js";

let open = null;

/**
 * The sign-in form, wherever someone signs in: the page's own and the dialog
 * over it. `email` starts it filled in; `onSignedIn()` runs once the node has
 * set the session's cookies.
 */
export function signInForm({ email: known = "", onSignedIn }) {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true, value: known });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const form = actionForm({
    className: "signin-form",
    fields: [labelled("Email", email), labelled("Password", password)],
    submit: "Sign in",
    failureTitle: "You are not signed in.",
    async onSubmit() {
      const response = await send("POST", "/api/sessions", { email: email.value, password: password.value, transport: "cookie" });
      if (!response.ok) throw new ApiError(response.status, await refusalOf(response));
      hint.set(true);
      password.value = "";
      await onSignedIn();
    },
  });
  return { form, email, password };
}

/**
 * Asks the person the page shows to sign in again, over the page. Once they
 * have, `onBack()` is called (to follow their own stream again) and the page
 * says their work is still there; if someone else signs in, `onSomeoneElse()`
 * starts the page afresh for them. One dialog at a time, however many
 * requests found the session over.
 */
export function signInAgain({ onBack, onSomeoneElse }) {
  if (open) return;
  const person = me;
  const headingId = uniqueId("again");
  const { form, email, password } = signInForm({
    email: person?.email ?? "",
    async onSignedIn() {
      const now = await api("GET", "/api/me");
      close();
      if (now.id !== person?.id) {
        onSomeoneElse();
        return;
      }
      setMe(now);
      onBack();
      const said = document.querySelector("main")?.querySelector(".signed-in-again") ?? h("div", { class: "signed-in-again" });
      said.replaceChildren(success("You are signed in again. What you had typed is still here: send it again."));
      document.querySelector("main")?.prepend(said);
    },
  });
  const dialog = h("dialog", { class: "signin-again", "aria-labelledby": headingId },
    h("h2", { id: headingId, text: "Sign in again to go on" }),
    h("p", { text: "Your session has ended. This page stays as you left it, with what you typed: sign in, then send it again." }),
    form);
  // The page behind it cannot be used without a session: the dialog stays until they are back.
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  function close() {
    dialog.close();
    dialog.remove();
    open = null;
  }
  open = dialog;
  document.body.append(dialog);
  dialog.showModal();
  (person?.email ? password : email).focus();
}

/** Whether the page is asking to sign in again (nothing else should ask meanwhile). */
export const signingInAgain = () => open !== null;
