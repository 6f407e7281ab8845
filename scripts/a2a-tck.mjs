// Runs the A2A TCK (a2aproject/a2a-tck, its 1.0 line) against one agent's A2A
// endpoint on a fresh local node, started as the end-to-end tests start one
// (the built Worker on workerd, agent messaging on). The TCK is not part of
// this repository: check it out and install it yourself, then
//
//   python3 -m venv <tck>/.venv && <tck>/.venv/bin/pip install -e <tck>
//   scripts/build.sh
//   A2A_TCK_DIR=<tck> node scripts/a2a-tck.mjs [--level must|should|may] [-- pytest arguments]
//
// The TCK reads `{sut-host}/.well-known/agent-card.json`, so its SUT host is the
// agent's own path. Its calls carry a second agent's credential (agent.messaging):
// the 1.0 TCK has no option for one, so a pytest plugin written beside this run
// gives every HTTP client it makes the header. RESPOND=1 has the target agent
// answer every request it claims, as a live agent would.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNode, setUp } from "../tests/e2e/harness.mjs";

const tck = process.env.A2A_TCK_DIR;
if (!tck) throw new Error("set A2A_TCK_DIR to a checkout of a2aproject/a2a-tck (its 1.0 line) with its .venv installed");
const passed = process.argv.slice(2);
const pytest = passed.includes("--") ? passed.splice(passed.indexOf("--")).slice(1) : [];

const plugin = mkdtempSync(join(tmpdir(), "a2a-tck-"));
writeFileSync(join(plugin, "tck_bearer.py"), `"""Gives every httpx client the TCK makes the bearer credential in A2A_BEARER."""
import os

import httpx

_bearer = os.environ["A2A_BEARER"]


def _with_bearer(original):
    def __init__(self, *args, **kwargs):
        headers = httpx.Headers(kwargs.pop("headers", None))
        headers.setdefault("authorization", f"Bearer {_bearer}")
        original(self, *args, headers=headers, **kwargs)

    return __init__


httpx.Client.__init__ = _with_bearer(httpx.Client.__init__)
httpx.AsyncClient.__init__ = _with_bearer(httpx.AsyncClient.__init__)
`);

const node = await startNode({ vars: { FEATURE_AGENT_NETWORK: "true" } });
let stopResponding = async () => {};
try {
  const { call, token, admin } = await setUp(node);
  const agent = async (name) => {
    const made = await call("POST", "/api/agents", { token, body: { name, sponsor: admin.id, capabilities: ["agent.messaging"], mailboxes: [] } });
    if (made.status !== 201) throw new Error(made.text);
    return { id: made.body.agent.id, credential: made.body.credential };
  };
  const caller = await agent("TCK caller");
  const target = await agent("TCK target");
  if (process.env.RESPOND === "1") {
    let running = true;
    const loop = (async () => {
      while (running) {
        const claimed = await call("POST", "/api/agent-inbox/leases", { token: target.credential, body: { max: 10 } });
        for (const message of claimed.body?.messages ?? []) {
          await call("POST", `/api/agent-inbox/${message.id}/reply`, { token: target.credential, body: { fencing_token: message.fencing_token, content: "Hello from TCK" } });
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    stopResponding = async () => {
      running = false;
      await loop;
    };
  }
  const sutHost = `${node.url}/a2a/${target.id}`;
  console.log(`SUT ${sutHost}`);
  const child = spawn(join(tck, ".venv", "bin", "python"), ["run_tck.py", "--sut-host", sutHost, "--transport", "jsonrpc", ...passed, "--", "-p", "tck_bearer", ...pytest], {
    cwd: tck,
    stdio: "inherit",
    env: { ...process.env, A2A_BEARER: caller.credential, PYTHONPATH: plugin },
  });
  process.exitCode = await new Promise((resolve) => child.on("exit", resolve));
} finally {
  await stopResponding();
  await node.stop();
  rmSync(plugin, { recursive: true, force: true });
}
