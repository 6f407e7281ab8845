// The live stream in a real browser: headless Chromium against the built Worker
// on workerd, two people working one shared mailbox, each in a browser context
// of their own (their own cookies), at a desktop's width (1280×800) and then a
// phone's (390×844), each layout with a mailbox and people of its own. While
// both look at its conversations, each page listens on the mailbox's WebSocket
// (`/api/mailboxes/:mailboxId/live`, authenticated by the session's cookie, under
// the page's Content-Security-Policy) and is told of each change in ids and
// kinds, never content:
// - mail delivered through the Worker's email handler appears in both lists
//   without a reload, the rows already shown left as they were (not drawn
//   afresh), and the words being typed into a filter keep their focus;
// - a conversation one person closes in the page shows as closed in the
//   other's list, and one assigned over the API shows its assignee in the
//   first's; a view left stops listening;
// - with a conversation open and a reply being written, an answer to it
//   appears there, the reply kept as typed and still in focus, and in the
//   other's list as a second message;
// - with both in one conversation, each page tells the other who is there:
//   Wren opening it shows Abe that she is reading it, her typing a reply that
//   she is writing one (by her name, which the node tells beside her
//   presence: Abe is no administrator), her saving it that she is reading again,
//   and her leaving that she is gone; all without a reload, and without Abe's
//   page reading the conversation again (presence is not a change); and Abe
//   writing a reply marks that conversation "writing…" in Wren's list;
// - a conversation assigned to Wren shows in her feed, her tab's title and
//   beside Notifications at once, told on her own stream;
// - once one of them may no longer read the mailbox, the node closes their
//   stream, and their list says, quietly, that it no longer follows it, and
//   never opens it again.
// Every console error and CSP violation in any page fails the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchChromium, PageWatch } from "./chromium.mjs";
import { assertFits, leaveUnsaved, signIn as signInAt } from "./browser-helpers.mjs";
import { ok, startDesk } from "./fixtures.mjs";

const LAYOUTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
];
/** Who works each layout's mailbox: the same two names, each layout its own people. */
const peopleOf = (layout) => ({
  wren: { name: "Wren Writer", email: `wren.${layout}@example.com`, password: "wren's first long password" },
  abe: { name: "Abe Able", email: `abe.${layout}@example.com`, password: "abe's first long password" },
});
/** What each of them holds on the mailbox: enough to read it, triage it and answer. */
const WORKING = ["mailbox.metadata.read", "mailbox.content.read", "send.propose"];
const ANA = "ana@customer.example";
const BO = "bo@customer.example";
/** How long a change may take to reach the other page: the stream, a short pause, and a read of the list. */
const TOLD_WITHIN_MS = 5_000;
/** What a frame of the stream may carry: ids and kinds, never content. */
const FRAME_FIELDS = ["at", "kind", "object", "topic"];
/** What a frame of presence may carry besides: who, and a word for what they do. */
const PRESENCE_FIELDS = ["actor_name", ...FRAME_FIELDS, "actor", "activity"];
/** How long the page is watched, once told of someone's presence, for a reading it should not make. */
const NOT_READ_AGAIN_MS = 1_500;

let node, call, token, desk, browser;
const watch = new PageWatch();
const made = {};
/** For each layout, how many streams Abe's page opened once the node had closed his for good. */
const streamsOpenedAfterRefusal = {};

/** A message as Email Routing hands it to the Worker, its stamp on top. */
function message({ id, subject, body, from, to, headers = "" }) {
  return Buffer.from(
    "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=customer.example header.s=s1; dmarc=pass header.from=customer.example; spf=pass smtp.mailfrom=ana@customer.example\r\n" +
    `${headers}From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\n` +
    `Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`,
  );
}

before(async () => {
  ({ node, call, token, desk } = await startDesk());
  for (const { name } of LAYOUTS) {
    const address = `${name}-support@mailroom.test`;
    const mailbox = await desk.mailbox(address, `Support (${name})`);
    const people = peopleOf(name);
    const wren = await desk.person(people.wren);
    const abe = await desk.person(people.abe);
    for (const person of [wren, abe]) await desk.grant(person.id, WORKING, mailbox.id);
    const to = `Support <${address}>`;
    const question = `Where is my invoice? (${name})`;
    const delivery = `Delivery question (${name})`;
    assert.equal(await node.deliver(BO, address, message({ id: `delivery-${name}@customer.example`, subject: delivery, body: "When will order 4471 arrive?", from: `Bo Berg <${BO}>`, to })), null);
    assert.equal(await node.deliver(ANA, address, message({ id: `question-${name}@customer.example`, subject: question, body: "I have not received the invoice for order 4471.", from: `Ana Lima <${ANA}>`, to })), null);
    made[name] = { mailbox, address, to, people, wren, abe, abeToken: await desk.signIn(people.abe), question, delivery, arrived: `Damaged parcel (${name})` };
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

const conversations = (page) => page.getByRole("list", { name: /^Conversations in / });
const rowOf = (page, subject) => conversations(page).getByRole("listitem").filter({ hasText: subject });
const statusSaying = (page, text) => page.getByRole("status").filter({ hasText: text });
/** Waits until the list asked for again by the person (a filter changed) has arrived. */
const settled = (page) => page.locator(".thread-list[aria-busy]").waitFor({ state: "detached" });

/**
 * Resolves, with the WebSocket, once `page` listens to `mailboxId`'s stream and
 * has read `what` (a path under the mailbox's API, as a RegExp) again on its
 * opening: from then on the page hears of every change there, and has read
 * whatever happened before it. Set up before the page goes there.
 */
function listeningOn(page, mailboxId, what) {
  return new Promise((resolve, reject) => {
    let socket = null;
    const onSocket = (opened) => {
      if (new URL(opened.url()).pathname === `/api/mailboxes/${mailboxId}/live`) socket = opened;
    };
    // The page reads what it shows once the stream opens (what changed before
    // was not told): the first such read after the socket was made.
    const onResponse = (response) => {
      if (!socket || !what.test(new URL(response.url()).pathname)) return;
      stop();
      resolve(socket);
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${page.url()} did not listen to ${mailboxId} within 15 s`));
    }, 15_000);
    const stop = () => {
      clearTimeout(timer);
      page.off("websocket", onSocket);
      page.off("response", onResponse);
    };
    page.on("websocket", onSocket);
    page.on("response", onResponse);
  });
}

/** The next frame of `kind` the page's stream is told, parsed, and checked to carry ids and kinds alone. */
async function toldOf(socket, kind, mailboxId) {
  const frame = await socket.waitForEvent("framereceived", {
    predicate: (received) => {
      try {
        return JSON.parse(received.payload).kind === kind;
      } catch {
        return false;
      }
    },
    timeout: TOLD_WITHIN_MS,
  });
  const event = JSON.parse(frame.payload);
  assert.deepEqual(Object.keys(event).filter((field) => !FRAME_FIELDS.includes(field)), [], `ids and kinds only: ${frame.payload}`);
  assert.equal(event.topic, `mailbox:${mailboxId}`, frame.payload);
  assert.equal(typeof event.at, "number", frame.payload);
  return event;
}

/** Marks the page's document, so that a reload (which makes another) is seen. */
/** What a conversation says of the others in it: the polite line above the reply. */
const presenceLine = (page) => page.locator("p.presence");
/** Waits until the conversation in `page` says exactly `words` of the others in it ("" for nobody). */
const presenceSays = (page, words) => page.waitForFunction(
  (expected) => document.querySelector("p.presence")?.textContent === expected, words, { timeout: TOLD_WITHIN_MS });

/** Resolves once `page` has asked for nothing at `pathname` for `quietMs` (what an earlier change had it read is done). */
async function quietAt(page, pathname, quietMs) {
  let last = Date.now();
  const seen = [];
  const onRequest = (request) => {
    if (new URL(request.url()).pathname !== pathname) return;
    last = Date.now();
    seen.push(`${request.method()} ${request.url()}`);
  };
  page.on("request", onRequest);
  // A page that never stops asking is a failure to name, not a wait forever.
  const deadline = Date.now() + 15_000;
  try {
    while (Date.now() - last < quietMs) {
      if (Date.now() > deadline) throw new Error(`${pathname} was still asked for after 15 s: ${seen.slice(-5).join(", ")} (${seen.length} in all)`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    page.off("request", onRequest);
  }
}

const markDocument = (page) => page.evaluate(() => {
  window.liveTestDocument = true;
});
const sameDocument = (page) => page.evaluate(() => window.liveTestDocument === true);

for (const layout of LAYOUTS) {
  const { name, ...options } = layout;
  const data = () => made[name];
  const run = {};

  test(`${name}: two people open the same mailbox, and each page listens to it`, async () => {
    for (const who of ["wren", "abe"]) {
      ({ page: run[who] } = await watch.open(browser, { who: `${name} ${who}`, ...options, locale: "en-GB" }));
      const listening = listeningOn(run[who], data().mailbox.id, /\/threads$/);
      // One mailbox to read: Mail lands on its conversations.
      await signInAt(run[who], node.url, data().people[who]);
      await rowOf(run[who], data().question).waitFor();
      run[`${who}Socket`] = await listening;
      await markDocument(run[who]);
    }
  });

  test(`${name}: mail delivered to the mailbox appears in both lists without a reload, the rows shown kept and the focus where it was`, async () => {
    const { wren, abe } = run;
    // Wren is typing words to find, not yet looked for; Abe's rows are held to see that they are not drawn afresh.
    const words = wren.getByRole("search", { name: "Filter conversations" }).getByLabel("Find");
    await words.click();
    await words.pressSequentially("parc");
    const keptRows = await Promise.all([wren, abe].map((page) => rowOf(page, data().question).elementHandle()));
    const told = [run.wrenSocket, run.abeSocket].map((socket) => toldOf(socket, "receive_mail", data().mailbox.id));

    assert.equal(await node.deliver(ANA, data().address, message({
      id: `parcel-${name}@customer.example`, subject: data().arrived, body: "The parcel for order 4471 arrived crushed.", from: `Ana Lima <${ANA}>`, to: data().to,
    })), null);

    for (const event of await Promise.all(told)) assert.match(event.object ?? "", /^rcp_/, "the message received, by its id");
    for (const page of [wren, abe]) {
      const arrived = rowOf(page, data().arrived);
      await arrived.waitFor({ timeout: TOLD_WITHIN_MS });
      assert.match(await arrived.getAttribute("class"), /\bunread\b/, "new, so unread");
      assert.match(await arrived.innerText(), /Ana Lima/);
      assert.ok(await sameDocument(page), "no reload");
    }
    for (const row of keptRows) assert.equal(await row.evaluate((element) => element.isConnected), true, "a row that did not change is the one shown before");
    assert.equal(await words.inputValue(), "parc", "the words typed are kept");
    assert.equal(await words.evaluate((input) => input === document.activeElement), true, "and keep the focus");
    await words.fill("");
    await assertFits(abe, `${name}: the list with what arrived`);
  });

  test(`${name}: a conversation one person closes shows as closed in the other's list, and one assigned over the API shows its assignee`, async () => {
    const { wren, abe } = run;
    // Abe follows every status, so the closed conversation stays in his list.
    await abe.getByRole("search", { name: "Filter conversations" }).getByLabel("Status").selectOption({ label: "Every status" });
    await settled(abe);
    const abeRow = rowOf(abe, data().delivery);
    assert.ok(await abeRow.getByText("Open", { exact: true }).isVisible());

    // Wren opens it: her list's stream closes, as the view it served went away.
    const listSocket = run.wrenSocket;
    const conversationListening = listeningOn(wren, data().mailbox.id, /\/threads\/thr_[^/]+$/);
    await rowOf(wren, data().delivery).getByRole("link").click();
    await wren.getByRole("heading", { name: data().delivery, level: 2 }).waitFor();
    if (!listSocket.isClosed()) await listSocket.waitForEvent("close");
    await conversationListening;

    const told = toldOf(run.abeSocket, "update_thread", data().mailbox.id);
    await wren.getByRole("group", { name: "Status" }).getByRole("button", { name: "Close" }).click();
    await statusSaying(wren, "Now closed.").waitFor();
    assert.match((await told).object ?? "", /^thr_/, "the conversation, by its id");
    await abeRow.getByText("Closed", { exact: true }).waitFor({ timeout: TOLD_WITHIN_MS });
    assert.equal(await abeRow.getByText("Open", { exact: true }).count(), 0);
    assert.equal(await abe.getByRole("search", { name: "Filter conversations" }).getByLabel("Status").inputValue(), "", "Abe's filter is as he left it");
    assert.ok(await sameDocument(abe), "no reload");

    // Back in her list, Wren sees what Abe takes over the API.
    const listening = listeningOn(wren, data().mailbox.id, /\/threads$/);
    await wren.getByRole("link", { name: "Back to the conversations" }).click();
    await rowOf(wren, data().question).waitFor();
    run.wrenSocket = await listening;
    const question = (await ok(call("GET", `/api/mailboxes/${data().mailbox.id}/threads`, { token: data().abeToken }))).threads.find((thread) => thread.subject === data().question);
    run.questionThread = question.id;
    await ok(call("PATCH", `/api/mailboxes/${data().mailbox.id}/threads/${question.id}`, { token: data().abeToken, body: { assignee: data().abe.id } }));
    await rowOf(wren, data().question).getByText("Assigned to Abe Able").waitFor({ timeout: TOLD_WITHIN_MS });
    assert.ok(await sameDocument(wren), "no reload");
  });

  test(`${name}: an answer to an open conversation appears in it while a reply is written, the reply kept and in focus`, async () => {
    const { wren, abe } = run;
    const listening = listeningOn(wren, data().mailbox.id, /\/threads\/thr_[^/]+$/);
    await rowOf(wren, data().question).getByRole("link").click();
    await wren.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    await listening;
    await wren.getByRole("button", { name: "Reply to Ana Lima" }).click();
    const text = wren.getByRole("region", { name: "Your reply" }).getByLabel("Text");
    await text.waitFor();
    const typed = "Hello Ana,\n\nWe are looking into it";
    await text.fill("");
    await text.pressSequentially(typed);

    assert.equal(await node.deliver(ANA, data().address, message({
      id: `question-2-${name}@customer.example`, subject: `Re: ${data().question}`, body: "It is for the order of 3 December.",
      from: `Ana Lima <${ANA}>`, to: data().to, headers: `In-Reply-To: <question-${name}@customer.example>\r\nReferences: <question-${name}@customer.example>\r\n`,
    })), null);

    const messages = wren.getByRole("list", { name: "Messages, oldest first" });
    await messages.getByText("It is for the order of 3 December.").waitFor({ timeout: TOLD_WITHIN_MS });
    assert.equal(await messages.getByRole("article", { name: /Ana Lima/ }).count(), 2, "both of Ana's messages");
    assert.ok(await wren.locator(".thread-facts").getByText("2 messages").isVisible());
    assert.equal(await text.inputValue(), typed, "the reply is as it was typed");
    assert.equal(await text.evaluate((field) => field === document.activeElement), true, "and still in focus");
    assert.ok(await sameDocument(wren), "no reload");
    await rowOf(abe, data().question).getByText("2 messages").waitFor({ timeout: TOLD_WITHIN_MS });
    await assertFits(wren, `${name}: a conversation with what arrived`);
  });

  test(`${name}: who is reading or writing a reply in a conversation is shown to the other in it, without a reload or a reading, and gone once they leave`, async () => {
    const { wren, abe } = run;
    const { mailbox, wren: wrenPerson } = data();
    const questionPath = `/api/mailboxes/${mailbox.id}/threads/${run.questionThread}`;
    // Abe is no administrator: he knows Wren's name as the node tells it beside her presence.

    // Wren steps back to her list (leaving her reply unsaved, as the page asks her), and Abe opens the conversation, alone in it.
    let listening = listeningOn(wren, mailbox.id, /\/threads$/);
    await leaveUnsaved(wren, () => wren.getByRole("link", { name: "Back to the conversations" }).click());
    run.wrenSocket = await listening;
    listening = listeningOn(abe, mailbox.id, /\/threads\/thr_[^/]+$/);
    await rowOf(abe, data().question).getByRole("link").click();
    await abe.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    const abeSocket = await listening;
    await markDocument(abe);
    assert.equal(await presenceLine(abe).getAttribute("aria-live"), "polite", "said politely");
    assert.equal(await presenceLine(abe).textContent(), "", "nobody else is in it");

    // Wren opens it too: Abe is told she is reading it.
    listening = listeningOn(wren, mailbox.id, /\/threads\/thr_[^/]+$/);
    await rowOf(wren, data().question).getByRole("link").click();
    await wren.getByRole("heading", { name: data().question, level: 2 }).waitFor();
    await listening;
    await presenceSays(abe, "Wren Writer is reading this conversation.");
    assert.equal(await presenceLine(wren).textContent(), "Abe Able is reading this conversation.", "and Wren, as she opened it, that Abe is");
    // Her opening marked it read for her, which Abe's page reads again: let that be done.
    await quietAt(abe, questionPath, 1_000);

    // Abe also has the mailbox's list open in another tab.
    const abeList = await abe.context().newPage();
    const listOpened = listeningOn(abeList, mailbox.id, /\/threads$/);
    await abeList.goto(`${new URL(abe.url()).origin}/#/mail/${mailbox.id}`);
    await listOpened;
    await quietAt(abeList, `/api/mailboxes/${mailbox.id}/threads`, 1_000);

    // Wren takes up the reply she began and writes: Abe sees it, and his pages read nothing for it.
    const reads = [];
    const onRequest = (request) => {
      if (request.method() === "GET" && new URL(request.url()).pathname === questionPath) reads.push(request.url());
    };
    const listReads = [];
    const onListRequest = (request) => {
      if (request.method() === "GET" && new URL(request.url()).pathname.startsWith(`/api/mailboxes/${mailbox.id}/threads`)) listReads.push(request.url());
    };
    abeList.on("request", onListRequest);
    const frames = [];
    const onFrame = (frame) => frames.push(JSON.parse(frame.payload));
    abe.on("request", onRequest);
    abeSocket.on("framereceived", onFrame);
    await wren.getByRole("button", { name: /^Edit draft/ }).click();
    const text = wren.getByRole("region", { name: "Your reply" }).getByLabel("Text");
    await text.pressSequentially("Hello Ana, the invoice is on its way.");
    await presenceSays(abe, "Wren Writer is writing a reply.");
    // Her draft saves itself as she types: a change, which Abe's page, not showing it, reads nothing for.
    await wren.getByRole("region", { name: "Your reply" }).getByText(/^Draft saved /).waitFor();
    await abe.waitForTimeout(NOT_READ_AGAIN_MS);
    abe.off("request", onRequest);
    abeSocket.off("framereceived", onFrame);
    assert.ok(await sameDocument(abe), "no reload");
    // Nothing changed meanwhile but her draft, saving itself as she typed;
    // Abe's page does not show it, and reads nothing for it (below).
    assert.deepEqual(frames.filter((frame) => frame.kind !== "presence" && frame.kind !== "update_draft"), [], "nothing changed meanwhile");
    const writing = frames.find((frame) => frame.kind === "presence" && frame.activity === "writing");
    assert.deepEqual([writing?.actor, writing?.actor_name, writing?.object, writing?.topic], [wrenPerson.id, "Wren Writer", run.questionThread, `mailbox:${mailbox.id}`], "told who writes where");
    for (const frame of frames) assert.deepEqual(Object.keys(frame).filter((field) => !PRESENCE_FIELDS.includes(field)), [], `ids, the name and a word only: ${JSON.stringify(frame)}`);
    assert.deepEqual(reads, [], "told of presence, Abe's page read the conversation no more");
    // A draft's text is in no conversation's summary: the list reads nothing for its saves either.
    abeList.off("request", onListRequest);
    assert.deepEqual(listReads, [], "the list read nothing again for a draft saving itself");
    await abeList.close();
    assert.equal(await presenceLine(wren).textContent(), "Abe Able is reading this conversation.", "Wren is not told of herself");
    await assertFits(abe, `${name}: a conversation saying who writes a reply`);

    // Saved, her reply is no longer being written; she leaves, and is gone from Abe's view.
    await wren.getByRole("button", { name: "Save changes" }).click();
    await statusSaying(wren, "Changes saved.").waitFor();
    await presenceSays(abe, "Wren Writer is reading this conversation.");
    listening = listeningOn(wren, mailbox.id, /\/threads$/);
    await wren.getByRole("link", { name: "Back to the conversations" }).click();
    run.wrenSocket = await listening;
    await presenceSays(abe, "");
    assert.ok(await sameDocument(abe), "no reload");

    // Abe writes a reply: Wren's list marks the conversation, by his name for screen readers, until he leaves it.
    await abe.getByRole("button", { name: "Reply to Ana Lima" }).last().click();
    const abeText = abe.getByRole("region", { name: "Your reply" }).getByLabel("Text");
    await abeText.pressSequentially("Hello Ana");
    const marker = rowOf(wren, data().question).locator(".thread-writing");
    await marker.waitFor({ timeout: TOLD_WITHIN_MS });
    assert.equal(await marker.locator("[aria-hidden=true]").innerText(), "writing…", "seen");
    assert.equal(await marker.locator(".visually-hidden").textContent(), "Abe Able is writing a reply.", "and heard");
    assert.equal(await rowOf(wren, data().arrived).locator(".thread-writing").count(), 0, "only that conversation");
    await assertFits(wren, `${name}: a list marking a conversation someone writes a reply to`);
    listening = listeningOn(abe, mailbox.id, /\/threads$/);
    await leaveUnsaved(abe, () => abe.getByRole("link", { name: "Back to the conversations" }).click());
    run.abeSocket = await listening;
    await marker.waitFor({ state: "detached", timeout: TOLD_WITHIN_MS });
  });

  test(`${name}: a conversation assigned to Wren shows in her feed, in her tab's title and beside Notifications, without a reload`, async () => {
    const { wren } = run;
    await wren.evaluate(() => (location.hash = "#/notifications"));
    const feed = wren.getByRole("list", { name: "Notifications, newest first" });
    await wren.getByRole("heading", { name: "Notifications", level: 1 }).waitFor();
    await wren.getByRole("main").getByText("Loading…").waitFor({ state: "detached" });
    const wrenToken = await desk.signIn(data().people.wren);
    const unread = async () => (await ok(call("GET", "/api/me/notifications?unread=true", { token: wrenToken }))).unread_count;
    const before = await unread();
    const expected = (count) => (count ? `(${count > 99 ? "99+" : count}) ` : "");
    await wren.waitForFunction((prefix) => document.title.startsWith(prefix) && !/^\(\d+\+?\) \(/.test(document.title), expected(before), { timeout: TOLD_WITHIN_MS });
    await ok(call("PATCH", `/api/mailboxes/${data().mailbox.id}/threads/${run.questionThread}`, { token: data().abeToken, body: { assignee: data().wren.id } }));
    assert.equal(await unread(), before + 1, "the assignment is in Wren's feed");
    // Told on Wren's own stream: her tab's title and the navigation count change while she stays where she is.
    await wren.waitForFunction((prefix) => document.title.startsWith(prefix), expected(before + 1), { timeout: TOLD_WITHIN_MS });
    assert.match(await wren.title(), /· Mailroom$/, `the view's own title follows the count: ${await wren.title()}`);
    await wren.waitForFunction((count) => document.querySelector(".nav-unread")?.textContent === `${count} unread`, before + 1, { timeout: TOLD_WITHIN_MS });
    await feed.getByRole("listitem").filter({ hasText: data().question }).waitFor({ timeout: TOLD_WITHIN_MS });
    assert.ok(await sameDocument(wren), "no reload");
    await assertFits(wren, `${name}: a feed that grew while it was shown`);
  });

  test(`${name}: once Abe may no longer see the mailbox's mail, his list stops following it and says so, quietly`, async () => {
    const { abe } = run;
    // What the assignment before had Abe's list read again is done, so the only read the revocation meets is its own.
    await quietAt(abe, `/api/mailboxes/${data().mailbox.id}/threads`, 600);
    await ok(call("POST", "/api/relations/revoke", { token, body: { subject: data().abe.id, relation: "mailbox.metadata.read", object: data().mailbox.id } }));
    if (!run.abeSocket.isClosed()) await run.abeSocket.waitForEvent("close", { timeout: TOLD_WITHIN_MS });
    const said = abe.getByText("This list no longer follows the mailbox as it changes: you may no longer see its mail.");
    await said.waitFor({ timeout: TOLD_WITHIN_MS });
    assert.equal(await said.getAttribute("role"), null, "not an alert");
    assert.equal(await abe.getByRole("alert").count(), 0, "nothing on the page is shown as failed");
    assert.ok(await rowOf(abe, data().question).isVisible(), "the list stays as it was");
    // Counted to the end of the file (the desktop's through every phone test): a stream the node closed for good is not opened again.
    streamsOpenedAfterRefusal[name] = 0;
    abe.on("websocket", () => streamsOpenedAfterRefusal[name]++);
  });
}

test("a stream the node closed for good was not opened again", () => {
  assert.deepEqual(streamsOpenedAfterRefusal, Object.fromEntries(LAYOUTS.map(({ name }) => [name, 0])));
});

test("nothing went wrong in any console, and nothing broke the Content-Security-Policy", () => {
  watch.assertNothingWentWrong(node.url);
});
