// The mailboxes' Durable Objects (decision 0040) started on workerd without
// the rest of the node: the built Worker's MailboxObject class, SQLite-backed
// as wrangler.toml declares it, reached through its binding and sent batches
// in the form the Worker sends them (core::mailbox_storage::WireBatch).
// Miniflare is the engine `wrangler dev` runs on; it is started directly
// because no route hands a mailbox's object the statements a test chooses.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { ROOT } from "./harness.mjs";

/**
 * Starts the mailboxes' objects, their storage kept under `persisted`, with `alongside` (modules' source, by name)
 * as a Worker of its own named "alongside", bound to them as the node is (MAILBOXES): what asks them from inside
 * workerd, as the node's Worker does, when that is what is measured.
 */
export function startMailboxObjects(persisted, alongside = undefined) {
  const built = join(ROOT, "build");
  const wrangler = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const compatibilityDate = /^compatibility_date = "([^"]+)"/m.exec(wrangler)[1];
  return new Miniflare({
    workers: [
      {
        config: {
          name: "mailroom",
          compatibilityDate,
          manifest: {
            mainModule: "index.js",
            modules: {
              "index.js": { type: "esm", contents: readFileSync(join(built, "index.js"), "utf8") },
              "index_bg.wasm": { type: "wasm", contents: new Uint8Array(readFileSync(join(built, "index_bg.wasm"))) },
            },
          },
          // As wrangler.toml declares them.
          env: { MAILBOXES: { type: "durable-object", worker: "mailroom", exportName: "MailboxObject" } },
          exports: { MailboxObject: { type: "durable-object", storage: "sqlite" } },
        },
      },
      ...(alongside === undefined
        ? []
        : [
            {
              config: {
                name: "alongside",
                compatibilityDate,
                manifest: {
                  mainModule: Object.keys(alongside)[0],
                  modules: Object.fromEntries(Object.entries(alongside).map(([name, contents]) => [name, { type: "esm", contents }])),
                },
                env: { MAILBOXES: { type: "durable-object", worker: "mailroom", exportName: "MailboxObject" } },
              },
            },
          ]),
    ],
    resourcePersistencePath: persisted,
  });
}

/** The stub of `mailbox`'s object on `engine`. */
export async function mailboxStub(engine, mailbox) {
  const namespace = await engine.getDurableObjectNamespace("MAILBOXES");
  return namespace.get(namespace.idFromName(mailbox));
}

/**
 * Posts `statements` ([sql, ...parameters]) to `mailbox`'s object: its answer as JSON.
 * `onlyIfCreated` asks it as a read before the Worker's checks is asked: only if the
 * object's database was ever created.
 */
export async function batch(engine, mailbox, statements, { onlyIfCreated = false } = {}) {
  const stub = await mailboxStub(engine, mailbox);
  const wire = { statements: statements.map(([sql, ...parameters]) => ({ sql, parameters })) };
  if (onlyIfCreated) wire.only_if_created = true;
  const body = JSON.stringify(wire);
  const response = await stub.fetch("https://mailbox/batch", { method: "POST", body });
  if (response.status !== 200) throw new Error(`the object answered ${response.status}: ${await response.text()}`);
  return response.json();
}
