// Write tests/data/pi/v4/--home-user-variants--/…000000000004.jsonl with pi-agent-core's own v4
// session code: the context rules the four original sessions do not reach (assistants that
// ended in error / aborted / deferred, also inside a compaction's retainedTail; empty and
// non-empty branch summaries; a branch created at null; a deleted label; usage and list writes).
//
//   cd tools/v4_contexts && npm install && node generate.mjs && node contexts.mjs --write
//
// The clock and entry ids are fixed so the file is the same on every run.
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NodeExecutionEnv } from "@earendil-works/pi-agent-core/harness/env/nodejs";
import {
	JsonlSessionRepo,
	appendList,
	branchTip,
	deleteList,
	insertEntry,
	insertUsage,
	list,
	setValue,
} from "@earendil-works/pi-agent-core/harness/session";

const here = dirname(fileURLToPath(import.meta.url));
const DATA = join(here, "..", "..", "tests", "data", "pi", "v4");
const ctx = {};
let clock = Date.UTC(2026, 0, 15, 10, 1, 0);
const now = () => (clock += 1000);
let n = 0x40;
const nextId = () => `e${(n++).toString(16).padStart(7, "0")}`;

const usage = (input, output) => ({
	input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
	cost: { input: input * 3e-6, output: output * 15e-6, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 15e-6 },
});
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: clock });
const assistant = (text, stopReason, extra = {}) => ({
	role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic",
	model: "claude-sonnet-4-5", usage: usage(100, 10), stopReason, timestamp: clock, ...extra,
});

// an entry the branch API does not append (compaction, branch_summary), committed with its tip move
async function insert(session, branch, entry) {
	const id = nextId();
	await session.mutate(async (m) => {
		const tip = await m.getValue(branchTip(branch), ctx);
		await m.commit([insertEntry({ id, parentId: tip.value, ...entry }), setValue(branchTip(branch), id)], ctx);
	}, ctx);
	return id;
}

const root = await mkdtemp(join(tmpdir(), "v4-generate-"));
try {
	const repo = new JsonlSessionRepo({ fileSystem: new NodeExecutionEnv({ cwd: root }), sessionsRoot: root, now });
	const session = await repo.create({ cwd: "/home/user/variants", id: "0199aaaa-0000-7000-8000-000000000004" }, ctx);
	session.idGenerator = { next: nextId };
	const main = await session.createBranch("main", null, ctx);
	const first = await main.appendMessage(user("Task 4: try the flaky tool"), ctx);
	await main.appendMessage(assistant("", "error", { errorMessage: "overloaded" }), ctx);
	await main.appendMessage(assistant("partial", "aborted"), ctx);
	const good = await main.appendMessage(assistant("Done.", "stop"), ctx);
	await main.appendMessage(assistant("later", "deferred"), ctx);
	await main.appendCustomEntry("demo.state", { step: 4 }, ctx);
	await insert(session, "main", {
		type: "compaction", summary: "## Goal\nflaky tool", tokensBefore: 4321,
		retainedTail: [user("kept user"), assistant("kept but aborted", "aborted"), assistant("kept answer", "stop")],
	});
	await main.appendMessage(user("after compaction"), ctx);
	await main.appendMessage(assistant("", "error", { errorMessage: "rate limited" }), ctx);
	await main.appendMessage(assistant("Final.", "stop"), ctx);
	const alt = await session.createBranch("alt", first, ctx);
	await insert(session, "alt", { type: "branch_summary", fromId: first, summary: "" });
	await insert(session, "alt", { type: "branch_summary", fromId: first, summary: "Tried another way first." });
	await alt.appendMessage(assistant("alt aborted", "aborted"), ctx);
	await alt.appendMessage(assistant("Alt answer.", "stop"), ctx);
	await session.createBranch("empty", null, ctx);
	await session.setName("Session 4", ctx);
	await session.setLabel(first, "start", ctx);
	await session.setLabel(good, "good", ctx);
	await session.setLabel(good, undefined, ctx);
	await session.mutate(async (m) => {
		await m.commit([insertUsage({ id: "usage-1", usage: usage(500, 50), details: { source: "title" } })], ctx);
	}, ctx);
	await session.mutate(async (m) => {
		await m.commit([appendList(list("demo.list", "k"), { v: 1 }), appendList(list("demo.list", "k"), { v: 2 })], ctx);
	}, ctx);
	await session.mutate(async (m) => m.commit([deleteList(list("demo.list", "k"))], ctx), ctx);
	await session.close(ctx);
	await cp(join(root, "--home-user-variants--"), join(DATA, "--home-user-variants--"), { recursive: true });
} finally {
	await rm(root, { recursive: true, force: true });
}
