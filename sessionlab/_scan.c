/* sessionlab._scan: one pass over the bytes of clean pi v3 session files, straight to columns.
 *
 * The native fast path of the loader (see sessionlab/tables/_native.py). It validates each line
 * as strict JSON, reads only the fields the tables need, computes pi's per-message character
 * counts (JavaScript string lengths, in UTF-16 units) from the raw text, and appends one row per
 * entry to growable column buffers; no Python object is made per entry, and the GIL is released
 * while a file is scanned, so two threads scan two files at once.
 *
 * It accepts exactly what the msgspec path (tables/_fast.py) accepts, or less: anything unusual
 * refuses the whole file, the scanner rolls its buffers back to where the file started, and the
 * caller loads that file on the slower paths. Refused: a BOM, a line that is not one `{...}` object
 * (with an optional trailing CR), invalid JSON or UTF-8, escapes in keys, surrogate escapes, a
 * known key twice in one object, a known field of the wrong JSON type, integers outside int64, a
 * header that is not {"type":"session","id":str,"version":3}, seed-dialect keys, an entry type
 * outside pi's eleven (1.6 added usage and context_edit), a missing or repeated id, a missing or
 * null entry timestamp, a parent that is not an earlier entry, a non-null retainedTail, nesting
 * deeper than MAX_DEPTH.
 *
 * The pi 1.6 values that need other lines (edit_action, system_est_tokens, the est_tokens of
 * context_edit entries and of system messages) are not computed here: sessionlab/tables/_pi16.py
 * fills them after any path (a system message's est_chars is 0 until then).
 *
 * Tool-call arguments count len(JSON.stringify(arguments)): computed here from the raw value
 * (whitespace dropped, strings re-escaped as JavaScript does) when its numbers are integers of at
 * most 15 digits and its objects have no repeated or escaped keys; otherwise the raw text is handed
 * back ("slow" arguments) and Python measures it with sessionlab._jsjson.
 */
#define PY_SSIZE_T_CLEAN
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* strtod_l */
#endif
#include <Python.h>
#include <locale.h>
#include <stdlib.h>
#if defined(__APPLE__)
#include <xlocale.h>
#endif

/* strtod follows LC_NUMERIC (a decimal comma in some locales); JSON numbers need the "C" locale */
#if defined(_WIN32)
static _locale_t c_locale;
static int c_locale_init(void) { c_locale = _create_locale(LC_NUMERIC, "C"); return c_locale ? 0 : -1; }
static double c_strtod(const char *s) { return _strtod_l(s, NULL, c_locale); }
#else
static locale_t c_locale;
static int c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); return c_locale ? 0 : -1; }
static double c_strtod(const char *s) { return strtod_l(s, NULL, c_locale); }
#endif

#include "_scan_json.h"
#include "_scan_fields.h"

/* pi's rules as the scanner applies them, exported as module attributes (see PyInit__scan) and
 * checked against sessionlab.tokens, sessionlab.io.dialects and tables/_schema.py by the tests
 * (tests/test_tokens.py) and at import (tables/_native.py). */
#define IMAGE_CHARS 4800 /* tokens.IMAGE_CHARS: what an image block counts where it counts */
#define HEAD_LINES 21    /* dialects.HEAD_LINES: the lines whose parent key decides the dialect */

/* ------------------------------------------------------------------ columns */

enum { K_STR, K_I64, K_I32, K_F64, K_BOOL };

typedef struct {
    const char *name;
    int kind;
    Buf vals;  /* K_STR: int32 end offsets (one per row); else the values */
    Buf data;  /* K_STR: the bytes */
    Buf valid; /* one byte per row */
} Col;

/* entry columns */
enum {
    E_LINE_NO, E_ENTRY_ID, E_PARENT_ID, E_ENTRY_INDEX, E_PARENT_INDEX, E_TYPE, E_TIMESTAMP, E_ROLE,
    E_PROVIDER, E_MODEL, E_API, E_STOP_REASON, E_INPUT, E_OUTPUT, E_CACHE_READ, E_CACHE_WRITE,
    E_TOTAL, E_CONTEXT, E_COST, E_EST_CHARS, E_TOOL_NAME, E_TOOL_CALL_COUNT, E_IS_ERROR,
    E_ERROR_MESSAGE, E_THINKING_LEVEL, E_FIRST_KEPT, E_TOKENS_BEFORE, E_FROM_ID, E_TARGET_ID,
    E_LABEL, E_CUSTOM_TYPE, E_SUMMARY_CHARS, E_NAME, E_RESPONSE_MODEL, E_REASONING, E_CACHE_WRITE_1H,
    E_USAGE_KIND, E_IMAGE_COUNT, E_NCOLS
};
static const struct { const char *name; int kind; } ECOLS[E_NCOLS] = {
    {"line_no", K_I32}, {"entry_id", K_STR}, {"parent_id", K_STR}, {"entry_index", K_I32},
    {"parent_index", K_I32}, {"type", K_STR}, {"timestamp", K_STR}, {"role", K_STR},
    {"provider", K_STR}, {"model", K_STR}, {"api", K_STR}, {"stop_reason", K_STR},
    {"input_tokens", K_I64}, {"output_tokens", K_I64}, {"cache_read_tokens", K_I64},
    {"cache_write_tokens", K_I64}, {"total_tokens", K_I64}, {"context_tokens", K_I64},
    {"cost_usd", K_F64}, {"est_chars", K_I64}, {"tool_name", K_STR}, {"tool_call_count", K_I32},
    {"is_error", K_BOOL}, {"error_message", K_STR}, {"thinking_level", K_STR},
    {"first_kept_entry_id", K_STR}, {"tokens_before", K_I64}, {"from_id", K_STR},
    {"target_id", K_STR}, {"label", K_STR}, {"custom_type", K_STR}, {"summary_chars", K_I64},
    {"name", K_STR}, {"response_model", K_STR}, {"reasoning_tokens", K_I64},
    {"cache_write_1h_tokens", K_I64}, {"usage_kind", K_STR}, {"image_count", K_I32},
};

/* block columns */
enum { B_ENTRY_ID, B_ROLE, B_INDEX, B_TYPE, B_TOOL_NAME, B_TOOL_CALL_ID, B_CHARS, B_NCOLS };
static const struct { const char *name; int kind; } BCOLS[B_NCOLS] = {
    {"entry_id", K_STR}, {"role", K_STR}, {"block_index", K_I32}, {"block_type", K_STR},
    {"tool_name", K_STR}, {"tool_call_id", K_STR}, {"chars", K_I64},
};

static int col_null(Col *c) {
    static const char zero[8] = {0};
    char v = 0;
    if (buf_put(&c->valid, &v, 1)) return -1;
    if (c->kind == K_STR) {
        int32_t end = (int32_t)c->data.len;
        return buf_put(&c->vals, &end, 4);
    }
    size_t w = c->kind == K_I32 ? 4 : c->kind == K_BOOL ? 1 : 8;
    return buf_put(&c->vals, zero, w);
}

static int col_str(Col *c, const char *s, size_t n) {
    char v = 1;
    if (c->data.len + n > (size_t)INT32_MAX) return -1;
    if (buf_put(&c->data, s, n) || buf_put(&c->valid, &v, 1)) return -1;
    int32_t end = (int32_t)c->data.len;
    return buf_put(&c->vals, &end, 4);
}

static int col_i64(Col *c, int64_t x) {
    char v = 1;
    return buf_put(&c->valid, &v, 1) || buf_put(&c->vals, &x, 8);
}

static int col_i32(Col *c, int32_t x) {
    char v = 1;
    return buf_put(&c->valid, &v, 1) || buf_put(&c->vals, &x, 4);
}

static int col_f64(Col *c, double x) {
    char v = 1;
    return buf_put(&c->valid, &v, 1) || buf_put(&c->vals, &x, 8);
}

static int col_bool(Col *c, int x) {
    char v = 1, b = (char)(x != 0);
    return buf_put(&c->valid, &v, 1) || buf_put(&c->vals, &b, 1);
}

typedef struct {
    size_t vals, data, valid;
} ColMark;

/* ------------------------------------------------------------------ the scanner object */

typedef struct {
    PyObject_HEAD
    int want_blocks;
    int busy;
    int64_t rows, block_rows;
    Col ecol[E_NCOLS];
    Col bcol[B_NCOLS];
    Buf slow;       /* Slow records */
    Buf slow_bytes; /* their raw text */
    /* per-file scratch, kept between files to avoid reallocation */
    P p;
    Buf links; /* Link per entry */
    Buf table; /* hash table of int32 entry positions */
    Buf has_child;
} Scanner;

static const unsigned char *sv_ptr(const P *p, const SVal *s) {
    return s->in_arena ? (const unsigned char *)p->arena.p + s->off : p->base + s->off;
}

static int sv_eq(const P *p, const SVal *s, const char *lit) {
    size_t n = strlen(lit);
    return s->kind == V_STR && s->len == n && !memcmp(sv_ptr(p, s), lit, n);
}

static int put_sv(Col *c, const P *p, const SVal *s) {
    if (s->kind != V_STR) return col_null(c);
    return col_str(c, (const char *)sv_ptr(p, s), s->len);
}

static int put_iv(Col *c, const IVal *v) {
    return v->kind == V_NUM ? col_i64(c, v->v) : col_null(c);
}

enum { T_MESSAGE = 1, T_THINKING, T_MODEL_CHANGE, T_COMPACTION, T_BRANCH_SUMMARY, T_CUSTOM,
       T_CUSTOM_MESSAGE, T_LABEL, T_SESSION_INFO, T_USAGE, T_CONTEXT_EDIT, T_NTYPES = T_CONTEXT_EDIT };

/* pi's entry types, T_x - 1 each (exported as ENTRY_TYPES; tables/_fast.py's PI_TYPES must agree) */
static const char *ENTRY_TYPE_NAMES[T_NTYPES] = {
    "message", "thinking_level_change", "model_change", "compaction", "branch_summary", "custom",
    "custom_message", "label", "session_info", "usage", "context_edit",
};

static int entry_type(const P *p, const SVal *t) {
    for (int i = 0; i < T_NTYPES; i++)
        if (sv_eq(p, t, ENTRY_TYPE_NAMES[i])) return i + 1;
    return 0;
}

/* The tool name and call id of a block row: a toolCall block's (its name "" when missing, as the
 * object model's default), null for other blocks. */
static int put_tool(Col *b, const P *p, const Blk *bk, int call) {
    if (!call) return col_null(&b[B_TOOL_NAME]) || col_null(&b[B_TOOL_CALL_ID]);
    if (bk->name.kind == V_STR ? put_sv(&b[B_TOOL_NAME], p, &bk->name) : col_str(&b[B_TOOL_NAME], "", 0)) return -1;
    return put_sv(&b[B_TOOL_CALL_ID], p, &bk->id);
}

/* Append one block row: the entry's id, the role (a parsed one, else the literal), the block's
 * index, its type (a string content is one "text" block: bk NULL) and tool, and its characters. */
static int block_row(Scanner *sc, const SVal *eid, const SVal *role_sv, const char *role_lit, int32_t j,
                     const Blk *bk, int64_t chars) {
    const P *p = &sc->p;
    Col *b = sc->bcol;
    if (put_sv(&b[B_ENTRY_ID], p, eid)) return -1;
    if (role_sv ? put_sv(&b[B_ROLE], p, role_sv) : col_str(&b[B_ROLE], role_lit, strlen(role_lit))) return -1;
    if (col_i32(&b[B_INDEX], j)) return -1;
    if (bk ? put_sv(&b[B_TYPE], p, &bk->type) || put_tool(b, p, bk, sv_eq(p, &bk->type, "toolCall"))
           : col_str(&b[B_TYPE], "text", 4) || put_tool(b, p, NULL, 0))
        return -1;
    if (col_i64(&b[B_CHARS], chars)) return -1;
    sc->block_rows++;
    return 0;
}

/* One content value's characters (pi's rule) and, with blocks, one block row per block. */
static int emit_content(Scanner *sc, const Content *c, int images, const SVal *role_sv, const char *role_lit,
                        const SVal *eid, int64_t *chars) {
    P *p = &sc->p;
    *chars = 0;
    if (c->kind == V_STR) {
        *chars = c->u16;
        return sc->want_blocks ? block_row(sc, eid, role_sv, role_lit, 0, NULL, c->u16) : 0;
    }
    if (c->kind != V_LIST) return 0;
    const Blk *blocks = (const Blk *)p->blocks.p + c->first;
    for (size_t j = 0; j < c->count; j++) {
        const Blk *bk = &blocks[j];
        int64_t n = 0;
        if (sv_eq(p, &bk->type, "text")) n = bk->text_u16;
        else if (images && sv_eq(p, &bk->type, "image")) n = IMAGE_CHARS;
        *chars += n;
        if (sc->want_blocks && block_row(sc, eid, role_sv, role_lit, (int32_t)j, bk, n)) return -1;
    }
    return 0;
}

/* Image blocks of a content value: 0 for a string, -1 (null) without content. */
static int64_t content_images(const P *p, const Content *c) {
    if (c->kind == V_STR) return 0;
    if (c->kind != V_LIST) return -1;
    const Blk *blocks = (const Blk *)p->blocks.p + c->first;
    int64_t k = 0;
    for (size_t j = 0; j < c->count; j++) k += sv_eq(p, &blocks[j].type, "image");
    return k;
}

static int add_slow(Scanner *sc, int64_t row, int64_t block_row, const Blk *bk) {
    Slow s = {row, block_row, (int64_t)sc->slow_bytes.len, (int64_t)bk->args_raw_len};
    if (buf_put(&sc->slow_bytes, sc->p.base + bk->args_off, bk->args_raw_len)) return -1;
    return buf_put(&sc->slow, &s, sizeof s);
}

/* ------------------------------------------------------------------ one entry's row
 *
 * A row is written column by column through the r_* helpers, which note each column they fill in
 * Row.written; row_end then writes a null into every column the entry left out, so no branch has to
 * balance the columns it does not concern. */

typedef struct {
    Scanner *sc;
    const P *p;
    Col *c;
    uint64_t written; /* bit i: entry column i has this row's value */
} Row;

_Static_assert(E_NCOLS <= 64, "Row.written holds one bit per entry column");

#define MARK(r, i) ((r)->written |= (uint64_t)1 << (i))

static int r_sv(Row *r, int i, const SVal *s) { MARK(r, i); return put_sv(&r->c[i], r->p, s); }
static int r_lit(Row *r, int i, const char *s) { MARK(r, i); return col_str(&r->c[i], s, strlen(s)); }
static int r_iv(Row *r, int i, const IVal *v) { MARK(r, i); return put_iv(&r->c[i], v); }
static int r_i64(Row *r, int i, int64_t x) { MARK(r, i); return col_i64(&r->c[i], x); }
static int r_i32(Row *r, int i, int32_t x) { MARK(r, i); return col_i32(&r->c[i], x); }
static int r_f64(Row *r, int i, double x) { MARK(r, i); return col_f64(&r->c[i], x); }
static int r_bool(Row *r, int i, int x) { MARK(r, i); return col_bool(&r->c[i], x); }

/* Nulls in the columns the row left out. */
static int row_end(Row *r) {
    for (int i = 0; i < E_NCOLS; i++)
        if (!(r->written & ((uint64_t)1 << i)) && col_null(&r->c[i])) return -1;
    r->sc->rows++;
    return 0;
}

/* pi's calculateContextTokens: totalTokens when non-zero, else the sum of the four parts. */
static int64_t context_tokens(const Usage *u) {
    int64_t ctx = u->total.kind == V_NUM ? u->total.v : 0;
    if (!ctx) {
        const IVal *parts[4] = {&u->input, &u->output_t, &u->cache_read, &u->cache_write};
        for (int i = 0; i < 4; i++)
            if (parts[i]->kind == V_NUM) ctx += parts[i]->v;
    }
    return ctx;
}

/* The usage columns of a row that has a usage object; kind: its usage_kind unless a usage entry names its own. */
static int row_usage(Row *r, const Ent *e, int t, const Usage *u, const char *kind) {
    if (r_iv(r, E_INPUT, &u->input) || r_iv(r, E_OUTPUT, &u->output_t) || r_iv(r, E_CACHE_READ, &u->cache_read) ||
        r_iv(r, E_CACHE_WRITE, &u->cache_write) || r_iv(r, E_TOTAL, &u->total) ||
        r_i64(r, E_CONTEXT, context_tokens(u)) || r_iv(r, E_REASONING, &u->reasoning) ||
        r_iv(r, E_CACHE_WRITE_1H, &u->cache_write_1h))
        return -1;
    if (u->cost_kind == V_OBJ && u->cost.kind == V_NUM && r_f64(r, E_COST, u->cost.v)) return -1;
    /* a usage entry's own kind, "usage" when it has none (or an empty one) */
    return t == T_USAGE && e->kind.kind == V_STR && e->kind.len ? r_sv(r, E_USAGE_KIND, &e->kind)
                                                                : r_lit(r, E_USAGE_KIND, kind);
}

/* An assistant message's characters (text, thinking, tool-call names and arguments), tool calls
 * and image count, with one block row per block. */
static int row_assistant(Row *r, const Ent *e, const Msg *m, const SVal *role, int64_t *chars) {
    Scanner *sc = r->sc;
    const P *p = r->p;
    int32_t calls = 0;
    if (m->content.kind == V_LIST) { /* (a string as assistant content is no content: null images) */
        if (r_i32(r, E_IMAGE_COUNT, (int32_t)content_images(p, &m->content))) return -1;
        const Blk *blocks = (const Blk *)p->blocks.p + m->content.first;
        for (size_t j = 0; j < m->content.count; j++) {
            const Blk *bk = &blocks[j];
            int64_t n = 0;
            if (sv_eq(p, &bk->type, "text")) n = bk->text_u16;
            else if (sv_eq(p, &bk->type, "thinking")) n = bk->thinking_u16;
            else if (sv_eq(p, &bk->type, "toolCall")) {
                calls++;
                n = bk->name.kind == V_STR ? bk->name.u16 : 0;
                if (bk->args_kind == V_OBJ) {
                    if (!bk->args_slow) n += bk->args_len;
                    else if (add_slow(sc, sc->rows, sc->want_blocks ? sc->block_rows : -1, bk)) return -1;
                }
            }
            *chars += n;
            if (sc->want_blocks && block_row(sc, &e->id, role, NULL, (int32_t)j, bk, n)) return -1;
        }
    }
    return r_i32(r, E_TOOL_CALL_COUNT, calls);
}

/* est_chars (pi's characters: tokens = ceil(chars / 4), in Python after slow arguments), the tool
 * call count and the image count, by pi's per-role rule (ROLE_CHARS in the module). */
static int row_chars(Row *r, const Ent *e, int t, const Msg *m, const SVal *role) {
    Scanner *sc = r->sc;
    const P *p = r->p;
    int64_t chars = 0;
    const Content *images = NULL; /* the content whose image blocks image_count counts */
    if (t == T_MESSAGE && m) {
        if (!role) {
        } else if (sv_eq(p, role, "assistant")) {
            if (row_assistant(r, e, m, role, &chars)) return -1;
        } else if (sv_eq(p, role, "toolResult") || sv_eq(p, role, "user") || sv_eq(p, role, "custom")) {
            if (emit_content(sc, &m->content, 1, role, NULL, &e->id, &chars)) return -1;
            images = &m->content;
        } else if (sv_eq(p, role, "system")) {
            images = &m->content; /* (its estimate: see the module doc) */
        } else if (sv_eq(p, role, "bashExecution")) {
            chars = (m->command.kind == V_STR ? m->command.u16 : 0) + (m->output.kind == V_STR ? m->output.u16 : 0);
        } else if (sv_eq(p, role, "branchSummary") || sv_eq(p, role, "compactionSummary")) {
            chars = m->summary.kind == V_STR ? m->summary.u16 : 0;
        }
    } else if (t == T_CUSTOM_MESSAGE) {
        if (emit_content(sc, &e->content, 1, NULL, "custom", &e->id, &chars)) return -1;
        images = &e->content;
    } else if (t == T_COMPACTION || t == T_BRANCH_SUMMARY) {
        chars = e->summary.kind == V_STR ? e->summary.u16 : 0;
    } else {
        return 0; /* no estimate */
    }
    if (images) {
        int64_t k = content_images(p, images);
        if (k >= 0 && r_i32(r, E_IMAGE_COUNT, (int32_t)k)) return -1;
    }
    return r_i64(r, E_EST_CHARS, chars);
}

/* The columns one entry type fills from the entry itself (not its message). */
static int row_entry_fields(Row *r, const Ent *e, int t) {
    switch (t) {
    case T_MODEL_CHANGE: return r_sv(r, E_PROVIDER, &e->provider) || r_sv(r, E_MODEL, &e->model_id);
    case T_USAGE: return r_sv(r, E_PROVIDER, &e->provider) || r_sv(r, E_MODEL, &e->model);
    case T_THINKING: return r_sv(r, E_THINKING_LEVEL, &e->thinking);
    case T_COMPACTION:
    case T_BRANCH_SUMMARY:
        if (r_i64(r, E_SUMMARY_CHARS, e->summary.kind == V_STR ? e->summary.u16 : 0)) return -1;
        return t == T_COMPACTION ? r_sv(r, E_FIRST_KEPT, &e->first_kept) || r_iv(r, E_TOKENS_BEFORE, &e->tokens_before)
                                 : r_sv(r, E_FROM_ID, &e->from_id);
    case T_LABEL: return r_sv(r, E_TARGET_ID, &e->target_id) || r_sv(r, E_LABEL, &e->label);
    case T_CONTEXT_EDIT: return r_sv(r, E_TARGET_ID, &e->target_id);
    case T_CUSTOM:
    case T_CUSTOM_MESSAGE: return r_sv(r, E_CUSTOM_TYPE, &e->custom_type);
    case T_SESSION_INFO: return r_sv(r, E_NAME, &e->name);
    default: return 0;
    }
}

/* The columns a message fills by its role (its characters aside). */
static int row_message_fields(Row *r, const Msg *m, const SVal *role) {
    const P *p = r->p;
    if (sv_eq(p, role, "assistant"))
        return r_sv(r, E_PROVIDER, &m->provider) || r_sv(r, E_MODEL, &m->model) || r_sv(r, E_API, &m->api) ||
               r_sv(r, E_STOP_REASON, &m->stop_reason) || r_sv(r, E_ERROR_MESSAGE, &m->error_message) ||
               r_sv(r, E_RESPONSE_MODEL, &m->response_model);
    if (sv_eq(p, role, "toolResult")) {
        if (r_sv(r, E_TOOL_NAME, &m->tool_name)) return -1;
        return (m->seen & SEEN_BIT(MK_IS_ERROR)) && m->is_error >= 0 ? r_bool(r, E_IS_ERROR, m->is_error) : 0;
    }
    if (sv_eq(p, role, "custom")) return r_sv(r, E_CUSTOM_TYPE, &m->custom_type);
    return 0;
}

/* Append the row of one parsed entry. */
static int emit_entry(Scanner *sc, const Ent *e, int t, int32_t line, int32_t index) {
    Row r = {sc, &sc->p, sc->ecol, 0};
    const Msg *m = t == T_MESSAGE && e->msg_kind == V_OBJ ? &e->m : NULL;
    const SVal *role = m && m->role.kind == V_STR ? &m->role : NULL;
    int asst = role && sv_eq(r.p, role, "assistant");
    /* the row's usage: an assistant's call, or the spend a compaction, branch_summary or usage entry records */
    const Usage *u = asst ? &m->usage : t == T_COMPACTION || t == T_BRANCH_SUMMARY || t == T_USAGE ? &e->usage : NULL;
    if (u && u->kind != V_OBJ) u = NULL;

    /* (parent_index stays null here: scan_file fills it once the file's ids are known) */
    if (r_i32(&r, E_LINE_NO, line) || r_sv(&r, E_ENTRY_ID, &e->id) || r_sv(&r, E_PARENT_ID, &e->parent) ||
        r_i32(&r, E_ENTRY_INDEX, index) || r_sv(&r, E_TYPE, &e->type) || r_sv(&r, E_TIMESTAMP, &e->timestamp))
        return -1;
    if (role && (r_sv(&r, E_ROLE, role) || row_message_fields(&r, m, role))) return -1;
    if (row_entry_fields(&r, e, t)) return -1;
    if (u) {
        static const char *kinds[] = {"message", "compaction", "branch_summary", "usage"};
        if (row_usage(&r, e, t, u, kinds[asst ? 0 : t == T_COMPACTION ? 1 : t == T_BRANCH_SUMMARY ? 2 : 3])) return -1;
    }
    if (row_chars(&r, e, t, m, role)) return -1;
    return row_end(&r);
}

static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* What the file gives beyond its rows; filled by scan_file. */
typedef struct {
    Ent header;
    int64_t n;
    int64_t name_entry; /* the last session_info, if its name is a string; else -1 */
    SVal name;
    int64_t leaf_count;
} FileFacts;

/* Scan one file into the columns; -1 (with p->why) refuses it. Runs without the GIL. */
static int scan_file(Scanner *sc, FileFacts *ff) {
    P *p = &sc->p;
    const unsigned char *buf = p->base, *end = p->end;
    const unsigned char *s = buf;
    int32_t line = 0;
    int have_header = 0, dialect_known = 0;
    Ent e;
    sc->links.len = 0;
    ff->n = 0;
    ff->name_entry = -1;
    if (end - s >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) FAIL(p, "BOM");
    while (s < end) {
        line++;
        if (*s == '\n') { s++; continue; }
        if (*s == '\r' && (end - s == 1 || s[1] == '\n')) { s += end - s == 1 ? 1 : 2; continue; }
        if (*s != '{') FAIL(p, "a line is not one object");
        memset(&e, 0, sizeof e);
        p->blocks.len = 0;
        p->p = s;
        p->end = end;
        if (read_entry(p, &e)) return -1;
        s = p->p;
        if (s < end && *s == '\r') s++;
        if (s < end && *s != '\n') FAIL(p, "more than one value on a line");
        if (s < end) s++;
        /* the dialect: the first object with a parent key decides (the seed's parent_id wins) */
        if (!dialect_known) {
            if (line > HEAD_LINES) FAIL(p, "dialect undecided");
            if (e.has_parent_snake_key) FAIL(p, "seed dialect");
            if (e.has_parent_id_key) dialect_known = 1;
        }
        if (!have_header) {
            if (!sv_eq(p, &e.type, "session") || e.id.kind != V_STR || e.version.kind != V_NUM || e.version.v != 3)
                FAIL(p, "header");
            ff->header = e;
            have_header = 1;
            continue;
        }
        int t = entry_type(p, &e.type);
        if (!t) FAIL(p, "entry type");
        if (e.id.kind != V_STR) FAIL(p, "missing id");
        if (e.timestamp.kind != V_STR) FAIL(p, "timestamp"); /* a bad_timestamp issue: the slower paths report it */
        if (t == T_SESSION_INFO) { /* the latest one names the session (pi 1.6; Python trims it) */
            ff->name_entry = e.name.kind == V_STR ? ff->n : -1;
            ff->name = e.name;
        }
        Link lk = {e.id, e.parent};
        if (buf_put(&sc->links, &lk, sizeof lk)) FAIL(p, "out of memory");
        if (emit_entry(sc, &e, t, line, (int32_t)ff->n)) {
            if (!p->why) p->why = "out of memory";
            return -1;
        }
        ff->n++;
    }
    if (!have_header) FAIL(p, "empty file");
    if (!dialect_known) FAIL(p, "dialect undecided"); /* no parent key at all: let detect_dialect count */
    /* ids unique, parents earlier in the file */
    int64_t n = ff->n;
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap *= 2;
    sc->table.len = 0;
    if (buf_grow(&sc->table, cap * 4)) FAIL(p, "out of memory");
    int32_t *tab = (int32_t *)sc->table.p;
    memset(tab, 0xFF, cap * 4);
    sc->has_child.len = 0;
    if (buf_grow(&sc->has_child, (size_t)n + 1)) FAIL(p, "out of memory");
    memset(sc->has_child.p, 0, (size_t)n + 1);
    const Link *links = (const Link *)sc->links.p;
    int32_t *pidx = (int32_t *)(sc->ecol[E_PARENT_INDEX].vals.p) + (sc->rows - n);
    char *pvalid = sc->ecol[E_PARENT_INDEX].valid.p + (sc->rows - n);
    int64_t parents = 0;
    for (int64_t i = 0; i < n; i++) {
        const SVal *id = &links[i].id;
        const unsigned char *ip = sv_ptr(p, id);
        /* the parent is looked up before this id is inserted: it must be an earlier entry */
        const SVal *par = &links[i].parent;
        if (par->kind == V_STR) {
            const unsigned char *pp = sv_ptr(p, par);
            size_t h = (size_t)hash_bytes(pp, par->len) & (cap - 1);
            int32_t found = -1;
            while (tab[h] >= 0) {
                const SVal *o = &links[tab[h]].id;
                if (o->len == par->len && !memcmp(sv_ptr(p, o), pp, par->len)) { found = tab[h]; break; }
                h = (h + 1) & (cap - 1);
            }
            if (found < 0) FAIL(p, "parent not an earlier entry");
            pidx[i] = found;
            pvalid[i] = 1;
            if (!sc->has_child.p[found]) { sc->has_child.p[found] = 1; parents++; }
        }
        size_t h = (size_t)hash_bytes(ip, id->len) & (cap - 1);
        while (tab[h] >= 0) {
            const SVal *o = &links[tab[h]].id;
            if (o->len == id->len && !memcmp(sv_ptr(p, o), ip, id->len)) FAIL(p, "repeated id");
            h = (h + 1) & (cap - 1);
        }
        tab[h] = (int32_t)i;
    }
    ff->leaf_count = n - parents;
    return 0;
}

static void sc_clear(Scanner *sc) {
    for (int i = 0; i < E_NCOLS; i++) {
        buf_free(&sc->ecol[i].vals); buf_free(&sc->ecol[i].data); buf_free(&sc->ecol[i].valid);
    }
    for (int i = 0; i < B_NCOLS; i++) {
        buf_free(&sc->bcol[i].vals); buf_free(&sc->bcol[i].data); buf_free(&sc->bcol[i].valid);
    }
    buf_free(&sc->slow);
    buf_free(&sc->slow_bytes);
    sc->rows = sc->block_rows = 0;
}

static void sc_init_cols(Scanner *sc) {
    for (int i = 0; i < E_NCOLS; i++) { sc->ecol[i].name = ECOLS[i].name; sc->ecol[i].kind = ECOLS[i].kind; }
    for (int i = 0; i < B_NCOLS; i++) { sc->bcol[i].name = BCOLS[i].name; sc->bcol[i].kind = BCOLS[i].kind; }
}

static int Scanner_init(Scanner *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"want_blocks", NULL};
    int wb = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", kwlist, &wb)) return -1;
    if (self->busy) {  /* another thread is scanning into the buffers sc_clear would free */
        PyErr_SetString(PyExc_RuntimeError, "Scanner re-initialised while it scans");
        return -1;
    }
    sc_clear(self);
    sc_init_cols(self);
    self->want_blocks = wb;
    return 0;
}

static void Scanner_dealloc(Scanner *self) {
    sc_clear(self);
    buf_free(&self->p.arena);
    buf_free(&self->p.blocks);
    buf_free(&self->links);
    buf_free(&self->table);
    buf_free(&self->has_child);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *sval_obj(const P *p, const SVal *s) {
    if (s->kind != V_STR) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8((const char *)sv_ptr(p, s), (Py_ssize_t)s->len, "strict");
}

PyDoc_STRVAR(add_doc,
"add(data: bytes) -> tuple | str\n\n"
"Scan one file's bytes and append its rows. Returns (entries, blocks, session_id, cwd,\n"
"parent_session, header_timestamp, name, leaf_id, leaf_count), or the reason (a str) when the\n"
"file is refused, in which case nothing of it is kept.");

static PyObject *Scanner_add(Scanner *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (self->busy) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "Scanner used from two threads at once");
        return NULL;
    }
    self->busy = 1;
    ColMark em[E_NCOLS], bm[B_NCOLS];
    for (int i = 0; i < E_NCOLS; i++) em[i] = (ColMark){self->ecol[i].vals.len, self->ecol[i].data.len, self->ecol[i].valid.len};
    for (int i = 0; i < B_NCOLS; i++) bm[i] = (ColMark){self->bcol[i].vals.len, self->bcol[i].data.len, self->bcol[i].valid.len};
    int64_t rows0 = self->rows, brows0 = self->block_rows;
    size_t slow0 = self->slow.len, slowb0 = self->slow_bytes.len;
    P *p = &self->p;
    p->base = (const unsigned char *)view.buf;
    p->p = p->base;
    p->end = p->base + view.len;
    p->arena.len = 0;
    p->why = NULL;
    FileFacts ff;
    memset(&ff, 0, sizeof ff);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_file(self, &ff);
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (rc) {
        for (int i = 0; i < E_NCOLS; i++) {
            self->ecol[i].vals.len = em[i].vals; self->ecol[i].data.len = em[i].data; self->ecol[i].valid.len = em[i].valid;
        }
        for (int i = 0; i < B_NCOLS; i++) {
            self->bcol[i].vals.len = bm[i].vals; self->bcol[i].data.len = bm[i].data; self->bcol[i].valid.len = bm[i].valid;
        }
        self->rows = rows0;
        self->block_rows = brows0;
        self->slow.len = slow0;
        self->slow_bytes.len = slowb0;
        if (p->why && !strcmp(p->why, "out of memory")) PyErr_NoMemory();
        else out = PyUnicode_FromString(p->why ? p->why : "refused");
    } else {
        const Link *links = (const Link *)self->links.p;
        PyObject *leaf = ff.n ? sval_obj(p, &links[ff.n - 1].id) : (Py_INCREF(Py_None), Py_None);
        PyObject *name = ff.name_entry >= 0 ? sval_obj(p, &ff.name) : (Py_INCREF(Py_None), Py_None);
        out = Py_BuildValue("(LLNNNNNNL)", (long long)ff.n, (long long)(self->block_rows - brows0),
                            sval_obj(p, &ff.header.id), sval_obj(p, &ff.header.cwd), sval_obj(p, &ff.header.parent_session),
                            sval_obj(p, &ff.header.timestamp), name, leaf, (long long)ff.leaf_count);
    }
    p->base = p->p = p->end = NULL;
    self->busy = 0;
    PyBuffer_Release(&view);
    return out;
}

static PyObject *col_tuple(const Col *c) {
    if (c->kind == K_STR)
        return Py_BuildValue("(sy#y#y#)", c->name, c->vals.p ? c->vals.p : "", (Py_ssize_t)c->vals.len,
                             c->data.p ? c->data.p : "", (Py_ssize_t)c->data.len, c->valid.p ? c->valid.p : "",
                             (Py_ssize_t)c->valid.len);
    return Py_BuildValue("(sy#y#)", c->name, c->vals.p ? c->vals.p : "", (Py_ssize_t)c->vals.len,
                         c->valid.p ? c->valid.p : "", (Py_ssize_t)c->valid.len);
}

PyDoc_STRVAR(finish_doc,
"finish() -> dict\n\n"
"The columns so far, as raw buffers, and a reset scanner: {'rows': n, 'block_rows': m,\n"
"'entries': [(name, offsets, data, valid) or (name, values, valid)], 'blocks': [...],\n"
"'slow': bytes of int64 (row, block_row, offset, length) records, 'slow_bytes': bytes}.");

static PyObject *Scanner_finish(Scanner *self, PyObject *Py_UNUSED(ignored)) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner used from two threads at once");
        return NULL;
    }
    PyObject *ents = PyList_New(E_NCOLS), *blks = PyList_New(self->want_blocks ? B_NCOLS : 0);
    if (!ents || !blks) goto fail;
    for (int i = 0; i < E_NCOLS; i++) {
        PyObject *t = col_tuple(&self->ecol[i]);
        if (!t) goto fail;
        PyList_SET_ITEM(ents, i, t);
    }
    for (int i = 0; self->want_blocks && i < B_NCOLS; i++) {
        PyObject *t = col_tuple(&self->bcol[i]);
        if (!t) goto fail;
        PyList_SET_ITEM(blks, i, t);
    }
    PyObject *out = Py_BuildValue("{sLsLsNsNsy#sy#}", "rows", (long long)self->rows, "block_rows",
                                  (long long)self->block_rows, "entries", ents, "blocks", blks, "slow",
                                  self->slow.p ? self->slow.p : "", (Py_ssize_t)self->slow.len, "slow_bytes",
                                  self->slow_bytes.p ? self->slow_bytes.p : "", (Py_ssize_t)self->slow_bytes.len);
    sc_clear(self);
    sc_init_cols(self);
    return out;
fail:
    Py_XDECREF(ents);
    Py_XDECREF(blks);
    return NULL;
}

static PyMethodDef Scanner_methods[] = {
    {"add", (PyCFunction)Scanner_add, METH_O, add_doc},
    {"finish", (PyCFunction)Scanner_finish, METH_NOARGS, finish_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sessionlab._scan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(want_blocks=False): clean pi v3 files to column buffers (see the module doc).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

/* What pi's estimate counts per message role, as the scanner counts it (tokens.ROLE_CHARS is the
 * rule; "system" is left to tables/_pi16.py, which needs the system messages before it). */
static const struct { const char *role, *parts; } ROLE_CHARS[] = {
    {"user", "content images"}, {"toolResult", "content images"}, {"custom", "content images"},
    {"assistant", "text thinking toolCall"}, {"bashExecution", "command output"},
    {"branchSummary", "summary"}, {"compactionSummary", "summary"}, {"system", "deferred"},
};

static PyObject *columns_tuple(const char *const *names, const int *kinds, int n) {
    static const char *kind_names[] = {"string", "int64", "int32", "float64", "bool"};
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *pair = Py_BuildValue("(ss)", names[i], kind_names[kinds[i]]);
        if (!pair) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, pair);
    }
    return t;
}

/* The rule constants and column lists as module attributes: IMAGE_CHARS, HEAD_LINES, ENTRY_TYPES,
 * ROLE_CHARS ({role: "part part"}), ENTRY_COLUMNS and BLOCK_COLUMNS ((name, kind) in buffer order). */
static int add_rules(PyObject *m) {
    const char *en[E_NCOLS], *bn[B_NCOLS];
    int ek[E_NCOLS], bk[B_NCOLS];
    for (int i = 0; i < E_NCOLS; i++) { en[i] = ECOLS[i].name; ek[i] = ECOLS[i].kind; }
    for (int i = 0; i < B_NCOLS; i++) { bn[i] = BCOLS[i].name; bk[i] = BCOLS[i].kind; }
    PyObject *types = PyTuple_New(T_NTYPES), *roles = PyDict_New();
    if (!types || !roles) goto fail;
    for (int i = 0; i < T_NTYPES; i++) {
        PyObject *s = PyUnicode_FromString(ENTRY_TYPE_NAMES[i]);
        if (!s) goto fail;
        PyTuple_SET_ITEM(types, i, s);
    }
    for (size_t i = 0; i < sizeof ROLE_CHARS / sizeof ROLE_CHARS[0]; i++) {
        PyObject *s = PyUnicode_FromString(ROLE_CHARS[i].parts);
        if (!s || PyDict_SetItemString(roles, ROLE_CHARS[i].role, s) < 0) { Py_XDECREF(s); goto fail; }
        Py_DECREF(s);
    }
    if (PyModule_AddIntConstant(m, "IMAGE_CHARS", IMAGE_CHARS) < 0 ||
        PyModule_AddIntConstant(m, "HEAD_LINES", HEAD_LINES) < 0 ||
        PyModule_AddObject(m, "ENTRY_TYPES", types) < 0)
        goto fail;
    types = NULL;
    if (PyModule_AddObject(m, "ROLE_CHARS", roles) < 0) goto fail;
    roles = NULL;
    PyObject *ec = columns_tuple(en, ek, E_NCOLS);
    if (!ec || PyModule_AddObject(m, "ENTRY_COLUMNS", ec) < 0) { Py_XDECREF(ec); return -1; }
    PyObject *bc = columns_tuple(bn, bk, B_NCOLS);
    if (!bc || PyModule_AddObject(m, "BLOCK_COLUMNS", bc) < 0) { Py_XDECREF(bc); return -1; }
    return 0;
fail:
    Py_XDECREF(types);
    Py_XDECREF(roles);
    return -1;
}

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "Native scanner of clean pi v3 session files (the loader's fast path).", -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void) {
    if (c_locale_init()) {
        PyErr_SetString(PyExc_ImportError, "no C locale for number parsing");
        return NULL;
    }
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&scan_module);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(m);
        return NULL;
    }
    if (add_rules(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
