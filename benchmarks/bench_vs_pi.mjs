// pi's own code on a corpus: open every session with its SessionManager, then build every
// assistant call's context (at the call's parent) with its token estimate. Run by
// benchmarks/bench_vs_pi.py, which installs the package and compares the numbers with sessionlab's.
//
//   node bench_vs_pi.mjs --pi PKG_DIR --corpus DIR --out FILE [--repeat N]
//
// Prints one JSON line of timings (best of --repeat, seconds); writes every call's estimates to
// --out as JSON ({"<file>\t<assistant id>": [messages, contextTokens, projectedTokens|null]}).
// The corpus must be a scratch copy: SessionManager.open may rewrite a file (migration, newline).
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
    const args = { pi: null, corpus: null, out: null, repeat: "3" };
    for (let i = 0; i < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, "");
        if (!(key in args) || i + 1 >= argv.length) throw new Error(`bad argument ${argv[i]}`);
        args[key] = argv[i + 1];
    }
    if (!args.pi || !args.corpus || !args.out) throw new Error("--pi, --corpus and --out are required");
    return { ...args, repeat: Number(args.repeat) };
}

async function loadPi(pkgDir) {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    const load = (rel) => import(pathToFileURL(path.join(pkgDir, rel)).href);
    const sm = await load("dist/core/session-manager.js");
    const compaction = await load("dist/core/compaction/compaction.js");
    return { version: pkg.version, ...sm, ...compaction };
}

function listFiles(root) {
    const found = [];
    const walk = (dir) => {
        for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
            const p = path.join(dir, ent.name);
            if (ent.isDirectory()) walk(p);
            else if (ent.isFile() && ent.name.endsWith(".jsonl")) found.push(p);
        }
    };
    walk(root);
    return found.sort();
}

function openAll(pi, files, workDir) {
    return files.map((f) => {
        const sm = pi.SessionManager.open(f, workDir);
        return { file: f, sm, entries: sm.getEntries() };
    });
}

// Every call's context and estimate, as pi computes it when it decides whether to compact:
// buildSessionContext at the call's parent and estimateContextTokens of its messages; pi >= 1.x
// also projects the branch (estimateProjectedContextTokens), which is what it compares with the window.
function allCalls(pi, sessions) {
    const out = {};
    const projected = typeof pi.buildSessionProjection === "function";
    for (const { file, sm, entries } of sessions) {
        for (const e of entries) {
            if (e.type !== "message" || e.message?.role !== "assistant" || !e.parentId) continue;
            const ctx = pi.buildSessionContext(entries, e.parentId);
            const est = pi.estimateContextTokens(ctx.messages);
            let proj = null;
            if (projected) {
                const branch = sm.getBranch(e.parentId);
                proj = pi.estimateProjectedContextTokens(pi.buildSessionProjection(entries, e.parentId), branch).tokens;
            }
            out[`${path.basename(file)}\t${e.id}`] = [ctx.messages.length, est.tokens, proj];
        }
    }
    return out;
}

function best(n, fn) {
    let bestT = Infinity;
    let value;
    for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        value = fn();
        bestT = Math.min(bestT, (performance.now() - t0) / 1000);
    }
    return [bestT, value];
}

const args = parseArgs(process.argv.slice(2));
const pi = await loadPi(args.pi);
const files = listFiles(args.corpus);
const workDir = fs.mkdtempSync(path.join(path.dirname(args.out), "pi-work-"));
openAll(pi, files, workDir); // a first open migrates/normalises the scratch copy; not timed
const [openS, sessions] = best(args.repeat, () => openAll(pi, files, workDir));
const [callsS, calls] = best(args.repeat, () => allCalls(pi, sessions));
fs.writeFileSync(args.out, JSON.stringify(calls));
console.log(JSON.stringify({ version: pi.version, files: files.length, calls: Object.keys(calls).length,
                             open_s: openS, calls_s: callsS, node: process.version }));
