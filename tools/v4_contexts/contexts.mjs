// Recompute tests/data/pi/v4/*.context.json with pi-agent-core's own v4 session code.
//
//   cd tools/v4_contexts && npm install && node contexts.mjs            # compare with the committed files
//   node contexts.mjs --write                                            # rewrite them
//
// The sessions are copied to a temporary folder first: the harness rewrites a file whose last
// line is torn, and the repository's copies must never change. For every session the harness
// opens (JsonlSessionRepo over the Node file system), this records what tests/test_v4.py compares:
// the header, getName(), the labels, entry counts, and for every pi.branch.tip value its path
// (scanBranch) and buildSessionContext's messages, with the latest compaction's facts.
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { NodeExecutionEnv } from "@earendil-works/pi-agent-core/harness/env/nodejs";
import { JsonlSessionRepo } from "@earendil-works/pi-agent-core/harness/session";

const here = dirname(fileURLToPath(import.meta.url));
const DATA = join(here, "..", "..", "tests", "data", "pi", "v4");
const PKG = join(here, "node_modules", "@earendil-works", "pi-agent-core");
const { buildSessionContext } = await import(join(PKG, "dist", "harness", "session", "context.js"));
const VERSION = JSON.parse(await readFile(join(PKG, "package.json"), "utf8")).version;
const ctx = {};

async function sessionFiles(dir) {
	const out = [];
	for (const d of await readdir(dir, { withFileTypes: true })) {
		const p = join(dir, d.name);
		if (d.isDirectory()) out.push(...(await sessionFiles(p)));
		else if (d.name.endsWith(".jsonl")) out.push(p);
	}
	return out.sort();
}

async function describe(repo, meta, root) {
	const before = await readFile(meta.path);
	const session = await repo.open(meta, ctx);
	const header = JSON.parse(before.toString("utf8").split("\n", 1)[0]);
	const labels = Object.fromEntries(
		(await session.scanValues({ namespace: "pi.entry.label", key: "" }, ctx)).map((v) => [v.address.key, v.value]),
	);
	const tips = (await session.scanValues({ namespace: "pi.branch.tip", key: "" }, ctx)).filter((v) => v.value !== null);
	const entries = [];
	for (const line of before.toString("utf8").split("\n").slice(1)) {
		if (!line.trim()) continue;
		const tx = JSON.parse(line);
		entries.push(...(Array.isArray(tx) ? tx : [tx]).filter((w) => w.kind === "entry"));
	}
	const typeCounts = {};
	for (const e of entries) typeCounts[e.type] = (typeCounts[e.type] ?? 0) + 1;
	const branches = [];
	for (const tip of tips) {
		const path = await session.scanBranch({ start: tip.value, order: "oldestFirst" }, ctx);
		const messages = await buildSessionContext(path, {}, ctx);
		let ci = -1;
		for (let i = path.length - 1; i >= 0; i--) if (path[i].type === "compaction") { ci = i; break; }
		const c = ci < 0 ? null : path[ci];
		branches.push({
			branch: tip.address.key,
			tipId: tip.value,
			pathIds: path.map((e) => e.id),
			messageCount: messages.length,
			roles: messages.map((m) => m.role),
			compaction: c === null ? null : {
				id: c.id,
				tokensBefore: c.tokensBefore,
				retainedTailCount: c.retainedTail.length,
				retainedTailInContext: messages.filter((m) => c.retainedTail.includes(m)).length,
				entriesBeforeCompactionDropped: ci,
			},
			messages,
		});
	}
	const result = {
		file: relative(root, meta.path),
		harness: `@earendil-works/pi-agent-core ${VERSION} (dist/harness/session)`,
		header,
		name: await session.getName(ctx),
		labels,
		entryCount: entries.length,
		entryTypeCounts: typeCounts,
		branches,
	};
	await session.close(ctx);
	result.fileUnchangedByOpen = Buffer.compare(before, await readFile(meta.path)) === 0;
	return result;
}

const write = process.argv.includes("--write");
const root = await mkdtemp(join(tmpdir(), "v4-contexts-"));
let differing = 0;
try {
	await cp(DATA, root, { recursive: true });
	const repo = new JsonlSessionRepo({ fileSystem: new NodeExecutionEnv({ cwd: root }), sessionsRoot: root });
	const metas = await repo.list({}, ctx);
	const byPath = new Map(metas.map((m) => [m.path, m]));
	for (const path of await sessionFiles(root)) {
		const meta = byPath.get(path);
		if (meta === undefined) throw new Error(`the harness does not list ${path}`);
		const result = await describe(repo, meta, root);
		const target = join(DATA, relative(root, path)).replace(/\.jsonl$/, ".context.json");
		const text = JSON.stringify(result, null, 1);
		let old = null;
		try { old = await readFile(target, "utf8"); } catch { /* new file */ }
		const same = old !== null && JSON.stringify(JSON.parse(old)) === JSON.stringify(result);
		if (!same) differing++;
		console.log(`${same ? "same" : "DIFFERS"}  ${relative(DATA, target)}`);
		if (write && !same) await writeFile(target, text);
	}
} finally {
	await rm(root, { recursive: true, force: true });
}
process.exitCode = differing && !write ? 1 : 0;
