// Compute tests/data/pi/expected-1.6/*.json by running pi 1.6.0's own session and compaction code.
//
// Usage: node tools/pi_expected.mjs --pi <dir of @earendil-works/pi-coding-agent> [--in DIR] [--out DIR]
//
// For every .jsonl under --in (its subfolders generated/, real/, real-newer/ and generated-1.6/ when
// they exist, else the whole folder), a temporary copy is opened with pi's loadEntriesFromFile and
// SessionManager.open, and one JSON is written to --out. The fields are defined in
// tests/data/pi/expected-1.6/README.md. Nothing here re-implements pi: every value comes from a
// call into the installed package; this script only walks entries and counts.

import { syncBuiltinESMExports } from "node:module";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_VERSION = "1.6.0";
const SUBFOLDERS = ["generated", "real", "real-newer", "generated-1.6"];
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
const CONTEXT_WINDOW = 128000;
const PRETTY_LIMIT = 300_000; // compact JSON under this many bytes is pretty-printed (indent 1)

// ---------------------------------------------------------------------------------------------
// v1 ids: pi's migration draws each new entry id from crypto.randomUUID().slice(0, 8). The n-th
// call is replaced by n as 8 hex digits so the results are reproducible. session-manager.js
// imports randomUUID by name from "crypto"; syncBuiltinESMExports() makes that live binding see
// the replacement.
let uuidCounter = 0;
const realRandomUUID = crypto.randomUUID;
function counterUUID() {
    uuidCounter += 1;
    return `${uuidCounter.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
}
crypto.randomUUID = counterUUID;
syncBuiltinESMExports();

function parseArgs(argv) {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const args = { pi: null, in: path.resolve(here, "..", "tests", "data", "pi"), out: null };
    for (let i = 0; i < argv.length; i++) {
        const key = argv[i];
        if (!["--pi", "--in", "--out"].includes(key) || i + 1 >= argv.length) {
            throw new Error(`usage: pi_expected.mjs --pi PKG_DIR [--in DIR] [--out DIR] (bad argument ${key})`);
        }
        args[key.slice(2)] = path.resolve(argv[++i]);
    }
    if (!args.pi) throw new Error("--pi PKG_DIR (the installed @earendil-works/pi-coding-agent folder) is required");
    args.out ??= fs.mkdtempSync(path.join(os.tmpdir(), "pi-expected-"));
    return args;
}

async function loadPi(pkgDir) {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    if (pkg.name !== "@earendil-works/pi-coding-agent" || pkg.version !== PI_VERSION) {
        throw new Error(`${pkgDir} holds ${pkg.name}@${pkg.version}, expected @earendil-works/pi-coding-agent@${PI_VERSION}`);
    }
    // The package's exports map exposes only ".", so the modules are imported by file path.
    const load = (rel) => import(pathToFileURL(path.join(pkgDir, rel)).href);
    const sm = await load("dist/core/session-manager.js");
    const compaction = await load("dist/core/compaction/compaction.js");
    const utils = await load("dist/core/compaction/utils.js");
    return { ...sm, ...compaction, computeFileLists: utils.computeFileLists };
}

function listInputs(root) {
    const present = SUBFOLDERS.filter((d) => fs.existsSync(path.join(root, d)));
    const starts = present.length ? present.map((d) => path.join(root, d)) : [root];
    const found = [];
    const walk = (dir) => {
        for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
            const p = path.join(dir, ent.name);
            if (ent.isDirectory()) walk(p);
            else if (ent.isFile() && ent.name.endsWith(".jsonl")) found.push(p);
        }
    };
    starts.forEach(walk);
    return found.map((p) => path.relative(root, p).split(path.sep).join("/")).sort();
}

// Counts by key in order of first appearance.
function countBy(items, key) {
    const counts = {};
    for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
    return counts;
}

// Header `version` of the first parseable `session` line, split into lines as pi does.
function firstHeaderVersion(file) {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
        if (!line.trim()) continue;
        let entry;
        try {
            entry = JSON.parse(line);
        } catch {
            continue;
        }
        if (entry && entry.type === "session") return entry.version ?? 1;
    }
    return null;
}

function report(pi, entries, leafId, branch) {
    const projection = pi.buildSessionProjection(entries, leafId);
    const context = pi.buildSessionContext(entries, leafId);
    return {
        thinkingLevel: context.thinkingLevel,
        model: context.model,
        messageCount: context.messages.length,
        roles: context.messages.map((m) => m.role),
        perMessageEstimatedTokens: context.messages.map((m) => pi.estimateTokens(m)),
        contextEstimate: pi.estimateContextTokens(context.messages),
        projectedContextEstimate: pi.estimateProjectedContextTokens(projection, branch),
    };
}

function preparation(pi, branch, branchIds) {
    const prep = pi.prepareCompaction(branch, SETTINGS);
    if (prep === undefined) return null;
    return {
        firstKeptEntryId: prep.firstKeptEntryId,
        firstKeptBranchIndex: branchIds.indexOf(prep.firstKeptEntryId),
        isSplitTurn: prep.isSplitTurn,
        tokensBefore: prep.tokensBefore,
        messagesToSummarizeCount: prep.messagesToSummarize.length,
        messagesToSummarizeRoleCounts: countBy(prep.messagesToSummarize, (m) => m.role),
        turnPrefixMessagesCount: prep.turnPrefixMessages.length,
        turnPrefixMessagesRoleCounts: countBy(prep.turnPrefixMessages, (m) => m.role),
        previousSummary: prep.previousSummary,
        fileLists: pi.computeFileLists(prep.fileOps),
    };
}

function analyse(pi, root, rel, workDir) {
    const copy = path.join(workDir, path.basename(rel));
    fs.copyFileSync(path.join(root, rel), copy);
    const base = { file: rel, pi: PI_VERSION, currentSessionVersion: pi.CURRENT_SESSION_VERSION };

    const sizeBefore = fs.statSync(copy).size;
    const loaded = pi.loadEntriesFromFile(copy);
    const appendedNewline = fs.statSync(copy).size !== sizeBefore;
    if (loaded.length === 0) {
        return { ...base, originalVersion: firstHeaderVersion(copy), valid: false, settings: SETTINGS };
    }
    const originalVersion = loaded[0].version ?? 1;

    uuidCounter = 0; // v1 ids count from 1 in every file
    const sm = pi.SessionManager.open(copy, workDir);
    const entries = sm.getEntries();
    const parents = new Set(entries.map((e) => e.parentId));
    const leafIds = entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
    const labels = {};
    for (const e of entries) {
        const label = sm.getLabel(e.id);
        if (label !== undefined) labels[e.id] = label;
    }

    const leaves = leafIds.map((leafId) => {
        const branch = sm.getBranch(leafId);
        const branchIds = branch.map((e) => e.id);
        const r = report(pi, entries, leafId, branch);
        return {
            leafId,
            leafType: sm.getEntry(leafId).type,
            branchIds,
            ...r,
            prepareCompaction: preparation(pi, branch, branchIds),
            shouldCompact128k: pi.shouldCompact(r.projectedContextEstimate.tokens, CONTEXT_WINDOW, SETTINGS),
        };
    });
    const calls = entries
        .filter((e) => e.type === "message" && e.message?.role === "assistant" && e.parentId)
        .map((e) => ({
            assistantId: e.id,
            parentId: e.parentId,
            ...report(pi, entries, e.parentId, sm.getBranch(e.parentId)),
        }));

    return {
        ...base,
        originalVersion,
        valid: true,
        appendedNewline,
        migrated: originalVersion < pi.CURRENT_SESSION_VERSION,
        header: sm.getHeader(),
        sessionName: sm.getSessionName() ?? null,
        entryCount: entries.length,
        entryTypeCounts: countBy(entries, (e) => e.type),
        labels,
        leafIds,
        defaultLeafId: sm.getLeafId(),
        leaves,
        calls,
        settings: SETTINGS,
    };
}

function serialise(result) {
    const compact = JSON.stringify(result);
    return `${Buffer.byteLength(compact, "utf8") < PRETTY_LIMIT ? JSON.stringify(result, null, 1) : compact}\n`;
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const pi = await loadPi(args.pi);
    const inputs = listInputs(args.in);
    if (inputs.length === 0) throw new Error(`no .jsonl files under ${args.in}`);
    fs.mkdirSync(args.out, { recursive: true });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pi-expected-work-"));
    try {
        for (const [i, rel] of inputs.entries()) {
            const workDir = path.join(scratch, String(i));
            fs.mkdirSync(workDir);
            const result = analyse(pi, args.in, rel, workDir);
            const name = rel.replace(/\.jsonl$/, ".json").split("/").join("__");
            fs.writeFileSync(path.join(args.out, name), serialise(result));
        }
    } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
        crypto.randomUUID = realRandomUUID;
        syncBuiltinESMExports();
    }
    console.log(`${inputs.length} files written to ${args.out}`);
}

main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
});
