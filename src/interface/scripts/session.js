// The session as the page holds it, in one place for every module: who is
// signed in (`me`), whether this browser believes it holds a session (the
// signed-in hint), the shell's steps that the API and the sections take, and
// what the view shown holds open (a live stream), let go of when it goes.

/**
 * Who is signed in (`GET /api/me`), or null. Importers read it live, as it is
 * now; only the shell changes it, through setMe().
 */
export let me = null;

export function setMe(person) {
  me = person;
}

// Whether this browser believes it holds a session. Not a secret and not
// authority (the cookies are HttpOnly): it only decides whether a visit starts
// by asking who is signed in or goes straight to the sign-in form.
const SIGNED_IN_HINT = "mailroom.signed-in";
export const hint = {
  get() {
    try {
      return localStorage.getItem(SIGNED_IN_HINT) === "1";
    } catch {
      return false;
    }
  },
  set(on) {
    try {
      if (on) localStorage.setItem(SIGNED_IN_HINT, "1");
      else localStorage.removeItem(SIGNED_IN_HINT);
    } catch {}
  },
};

// The shell's steps that others take: the API shows the sign-in form when a
// session cannot go on, Relations starts again when the signed-in person's own
// relations change, and a search routes again when its hash does not change.
// The shell (main.js) imports every section, so they cannot import it back
// without a cycle through the entry; it hands its steps over here as it loads.
let shell = null;

export function connectShell(steps) {
  shell = steps;
}

export const showSignIn = (notice) => shell.showSignIn(notice);
export const start = () => shell.start();
export const route = () => shell.route();

/**
 * The event the shell dispatches on `document` whenever the signed-in
 * person's own stream tells of a change of theirs (`detail`: the change as
 * told, ids and kinds): a view showing their own data reads it again.
 */
export const OWN_CHANGED = "mailroom:own-changed";

/**
 * Calls `readAgain` (at most once in a short while) whenever the person's own
 * data changes, until the view shown is replaced.
 */
export function followOwnWhileShown(view, readAgain) {
  let waiting = null;
  const changed = () => {
    if (waiting === null) waiting = setTimeout(() => {
      waiting = null;
      readAgain();
    }, 200);
  };
  document.addEventListener(OWN_CHANGED, changed);
  holdWhileShown(view, () => {
    document.removeEventListener(OWN_CHANGED, changed);
    if (waiting !== null) clearTimeout(waiting);
  });
}

// What the view shown holds open (a live stream, its timers), each as the step
// that lets go of it. The shell lets go of all of it whenever it shows another
// view or the sign-in form, so that a view a person has left stops listening
// and nothing it held acts on the page that replaced it.
let heldByView = [];

/**
 * Holds `release` until the view shown is replaced. A view whose rendering
 * finished after the person had already left it (`view` no longer on the
 * page) lets go at once.
 */
export function holdWhileShown(view, release) {
  if (view.isConnected) heldByView.push(release);
  else release();
}

/** Lets go of everything the view shown held; the shell calls it as it replaces the view. */
export function releaseView() {
  const held = heldByView;
  heldByView = [];
  for (const release of held) release();
}
