// What workerd costs the machine while the benchmark runs it: its processes
// (under wrangler, which starts them) and their CPU time and resident memory,
// read from Linux's /proc. Used by scripts/bench.mjs.
import { execSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

// Linux's clock ticks per second, in which /proc counts CPU time.
const CLOCK_TICKS = Number(execSync("getconf CLK_TCK").toString().trim()) || 100;

/** The pids of the workerd processes under `pid` (wrangler, which starts them). */
export function workerdUnder(pid) {
  const parents = new Map();
  const names = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      names.set(Number(entry), stat.slice(stat.indexOf("(") + 1, close));
      parents.set(Number(entry), Number(stat.slice(close + 2).split(" ")[1]));
    } catch {}
  }
  const under = (candidate) => {
    for (let at = candidate; at > 1; at = parents.get(at) ?? 0) if (at === pid) return true;
    return false;
  };
  return [...names].filter(([candidate, name]) => name.includes("workerd") && under(candidate)).map(([candidate]) => candidate);
}

/** CPU time (ms, user and system) and resident memory (KiB) of `pids`, now. */
export function usage(pids) {
  let ticks = 0;
  let resident = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
      resident += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {}
  }
  return { cpuMs: (ticks * 1000) / CLOCK_TICKS, residentKiB: resident };
}
