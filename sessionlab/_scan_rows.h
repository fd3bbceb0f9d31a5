/* sessionlab._scan, part 3: the column buffers, the scanner object and one entry's row (included
 * by _scan.c only, after the rule constants).
 *
 * Each column is a growable buffer of values (strings: int32 end offsets and their bytes) and one
 * validity byte per row; emit_entry appends one row per parsed entry (Ent) and, with want_blocks,
 * one block row per content block. */
#ifndef SESSIONLAB_SCAN_ROWS_H
#define SESSIONLAB_SCAN_ROWS_H

#include "_scan_fields.h"
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
    Buf line_starts; /* int64 per entry row: where its line starts in its file's bytes */
    /* per-file scratch, kept between files to avoid reallocation */
    P p;
    Buf links; /* Link per entry */
    Buf table; /* hash table of int32 entry positions */
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

/* The parts pi's rule counts for a role (ROLE_CHARS, generated from sessionlab/pi/rules.py); 0 for a
 * role it does not know. (A linear search: eight short names, compared by length first.) */
static unsigned role_mask(const P *p, const SVal *role) {
    for (size_t i = 0; i < sizeof ROLE_CHARS / sizeof ROLE_CHARS[0]; i++)
        if (sv_eq(p, role, ROLE_CHARS[i].role)) return ROLE_CHARS[i].mask;
    return 0;
}

static unsigned role_mask_lit(const char *role) {
    for (size_t i = 0; i < sizeof ROLE_CHARS / sizeof ROLE_CHARS[0]; i++)
        if (!strcmp(role, ROLE_CHARS[i].role)) return ROLE_CHARS[i].mask;
    return 0;
}

/* One content value's characters (the role's PART_CONTENT: a string or its text blocks; its
 * PART_IMAGES: IMAGE_CHARS per image block) and, with blocks, one block row per block. */
static int emit_content(Scanner *sc, const Content *c, unsigned mask, const SVal *role_sv, const char *role_lit,
                        const SVal *eid, int64_t *chars) {
    P *p = &sc->p;
    *chars = 0;
    if (c->kind == V_STR) {
        int64_t n = mask & PART_CONTENT ? c->u16 : 0;
        *chars = n;
        return sc->want_blocks ? block_row(sc, eid, role_sv, role_lit, 0, NULL, n) : 0;
    }
    if (c->kind != V_LIST) return 0;
    const Blk *blocks = (const Blk *)p->blocks.p + c->first;
    for (size_t j = 0; j < c->count; j++) {
        const Blk *bk = &blocks[j];
        int64_t n = 0;
        if (sv_eq(p, &bk->type, "text")) n = mask & PART_CONTENT ? bk->text_u16 : 0;
        else if ((mask & PART_IMAGES) && sv_eq(p, &bk->type, "image")) n = IMAGE_CHARS;
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

/* An assistant message's characters (by its parts: text, thinking, tool-call names and arguments),
 * tool calls and image count, with one block row per block. */
static int row_assistant(Row *r, const Ent *e, const Msg *m, const SVal *role, unsigned mask, int64_t *chars) {
    Scanner *sc = r->sc;
    const P *p = r->p;
    int32_t calls = 0;
    if (m->content.kind == V_LIST) { /* (a string as assistant content is no content: null images) */
        if (r_i32(r, E_IMAGE_COUNT, (int32_t)content_images(p, &m->content))) return -1;
        const Blk *blocks = (const Blk *)p->blocks.p + m->content.first;
        for (size_t j = 0; j < m->content.count; j++) {
            const Blk *bk = &blocks[j];
            int64_t n = 0;
            if (sv_eq(p, &bk->type, "text")) n = mask & PART_TEXT ? bk->text_u16 : 0;
            else if (sv_eq(p, &bk->type, "thinking")) n = mask & PART_THINKING ? bk->thinking_u16 : 0;
            else if (sv_eq(p, &bk->type, "toolCall")) {
                calls++;
                n = (mask & PART_TOOLCALL) && bk->name.kind == V_STR ? bk->name.u16 : 0;
                if ((mask & PART_TOOLCALL) && bk->args_kind == V_OBJ) {
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

#define SV_U16(v) ((v).kind == V_STR ? (v).u16 : 0)

/* est_chars (pi's characters: tokens = ceil(chars / CHARS_PER_TOKEN), in Python after slow
 * arguments), the tool call count and the image count, by pi's per-role rule (ROLE_CHARS in
 * _scan_rules.h: the assistant's parts are its content blocks, every other role's its content and
 * string fields; a "deferred" role is left to tables/_pi16.py). */
static int row_chars(Row *r, const Ent *e, int t, const Msg *m, const SVal *role) {
    Scanner *sc = r->sc;
    const P *p = r->p;
    int64_t chars = 0;
    const Content *images = NULL; /* the content whose image blocks image_count counts */
    if (t == T_MESSAGE && m) {
        unsigned mask = role ? role_mask(p, role) : 0;
        if (!role) {
        } else if (sv_eq(p, role, "assistant")) {
            if (row_assistant(r, e, m, role, mask, &chars)) return -1;
        } else if (mask & PART_DEFERRED) {
            images = &m->content; /* (its estimate: see the module doc) */
        } else {
            if (mask & (PART_CONTENT | PART_IMAGES)) {
                if (emit_content(sc, &m->content, mask, role, NULL, &e->id, &chars)) return -1;
                images = &m->content;
            }
            chars += (mask & PART_COMMAND ? SV_U16(m->command) : 0) + (mask & PART_OUTPUT ? SV_U16(m->output) : 0) +
                     (mask & PART_SUMMARY ? SV_U16(m->summary) : 0);
        }
    } else if (t == T_CUSTOM_MESSAGE) { /* (counted as a "custom" message, as pi converts it) */
        if (emit_content(sc, &e->content, role_mask_lit("custom"), NULL, "custom", &e->id, &chars)) return -1;
        images = &e->content;
    } else if (t == T_COMPACTION || t == T_BRANCH_SUMMARY) {
        unsigned mask = role_mask_lit(t == T_COMPACTION ? "compactionSummary" : "branchSummary");
        chars = mask & PART_SUMMARY ? SV_U16(e->summary) : 0;
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

#endif
