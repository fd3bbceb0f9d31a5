/* sessionlab._scan, part 2: the pi fields the tables need (included by _scan.c only).
 *
 * One parsed entry (Ent), its message (Msg) and content blocks (Blk), and the readers that fill
 * them from a line: known keys are type-checked as msgspec would (a wrong JSON type, or a known
 * key twice in one object, refuses the file), unknown keys are skipped after validation.
 */
#ifndef SESSIONLAB_SCAN_FIELDS_H
#define SESSIONLAB_SCAN_FIELDS_H

#include "_scan_json.h"

/* ------------------------------------------------------------------ parsed values */

typedef struct {
    int kind; /* V_ABSENT, V_NULL or V_NUM */
    int64_t v;
} IVal;

typedef struct {
    int kind;
    double v;
} FVal;

typedef struct {
    SVal type, name, id;
    int64_t text_u16, thinking_u16;
    int text_kind, thinking_kind;
    int args_kind;     /* V_ABSENT / V_NULL or the value's kind */
    int64_t args_len;  /* len(JSON.stringify(arguments)) when not slow */
    int args_slow;
    size_t args_off, args_raw_len; /* raw text in the input */
} Blk;

typedef struct {
    int kind; /* V_ABSENT, V_NULL, V_STR, V_LIST */
    int64_t u16;
    size_t first, count; /* blocks in the entry's block pool */
} Content;

/* a usage object: an assistant's, or (pi 1.6) a compaction's, branch_summary's or usage entry's */
typedef struct {
    int kind, cost_kind; /* V_ABSENT, V_NULL or V_OBJ */
    IVal input, output_t, cache_read, cache_write, total, reasoning, cache_write_1h;
    FVal cost;
    uint32_t seen, seen_cost;
} Usage;

/* A message's known keys: bit MK_x of Msg.seen is set once key x was read (a second time refuses
 * the file); emit_entry reads MK_IS_ERROR to tell an absent isError from false. */
enum {
    MK_ROLE, MK_CONTENT, MK_API, MK_PROVIDER, MK_MODEL, MK_USAGE, MK_STOP_REASON, MK_ERROR_MESSAGE, MK_TOOL_NAME,
    MK_IS_ERROR, MK_CUSTOM_TYPE, MK_COMMAND, MK_OUTPUT, MK_SUMMARY, MK_RESPONSE_MODEL
};
#define SEEN_BIT(k) ((uint32_t)1 << (k))

typedef struct {
    SVal role, api, provider, model, stop_reason, error_message, tool_name, custom_type;
    SVal command, output, summary, response_model;
    Content content;
    Usage usage;
    int is_error; /* -1 absent/null, else 0/1 */
    uint32_t seen;
} Msg;

typedef struct {
    SVal type, id, parent, timestamp, thinking, provider, model_id, summary, first_kept, from_id;
    SVal custom_type, target_id, label, name, cwd, parent_session, kind, model;
    IVal tokens_before, version;
    Content content;
    Usage usage;
    int msg_kind;
    Msg m;
    int has_parent_id_key, has_parent_snake_key;
    int has_system_message; /* a compaction's systemMessage key (pi 1.6; skipped, resolved in Python) */
    uint32_t seen;
} Ent;

/* per-entry facts kept until the file is resolved */
typedef struct {
    SVal id, parent;
} Link;

/* slow tool-call arguments: raw text measured in Python */
typedef struct {
    int64_t row, block_row;
    int64_t off, len; /* into the slow-bytes buffer */
} Slow;

/* ------------------------------------------------------------------ typed fields */

static int read_str(P *p, SVal *out, int capture) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    if (*p->p == '"') return scan_string(p, out, capture, NULL) < 0 ? -1 : 0;
    if (*p->p == 'n') { out->kind = V_NULL; return scan_literal(p, "null", 4); }
    FAIL(p, "a string field holds another type");
}

static int read_int(P *p, IVal *out) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    if (*p->p == 'n') { out->kind = V_NULL; return scan_literal(p, "null", 4); }
    if (*p->p != '-' && (*p->p < '0' || *p->p > '9')) FAIL(p, "an integer field holds another type");
    int is_int, fits;
    const unsigned char *tok;
    size_t tl;
    if (scan_number(p, &is_int, &out->v, &fits, &tok, &tl)) return -1;
    if (!is_int || !fits) FAIL(p, "an integer field holds a float or a huge number");
    out->kind = V_NUM;
    return 0;
}

static int read_float(P *p, FVal *out) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    if (*p->p == 'n') { out->kind = V_NULL; return scan_literal(p, "null", 4); }
    if (*p->p != '-' && (*p->p < '0' || *p->p > '9')) FAIL(p, "a number field holds another type");
    int is_int, fits;
    int64_t iv;
    const unsigned char *tok;
    size_t tl;
    if (scan_number(p, &is_int, &iv, &fits, &tok, &tl)) return -1;
    out->kind = V_NUM;
    if (is_int && fits) {
        out->v = (double)iv; /* as Python's float(int): -0 is 0.0 */
        return 0;
    }
    char tmp[64];
    if (tl >= sizeof tmp) FAIL(p, "number too long");
    memcpy(tmp, tok, tl);
    tmp[tl] = 0;
    out->v = c_strtod(tmp); /* correctly rounded, as Python's float(), in any locale */
    out->kind = V_NUM;
    return 0;
}

static int read_bool(P *p, int *out) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    if (*p->p == 'n') { *out = -1; return scan_literal(p, "null", 4); }
    if (*p->p == 't') { *out = 1; return scan_literal(p, "true", 4); }
    if (*p->p == 'f') { *out = 0; return scan_literal(p, "false", 5); }
    FAIL(p, "a boolean field holds another type");
}

/* V_NULL if the value at p->p is null (consumed), else V_OBJ (nothing consumed); -1 on error */
static int null_or_value(P *p) {
    skip_ws(p);
    if (p->p < p->end && *p->p == 'n') return scan_literal(p, "null", 4) ? -1 : V_NULL;
    return V_OBJ;
}

/* one key: no escapes, returned as a pointer into the input */
static int read_key(P *p, const char **k, size_t *n) {
    skip_ws(p);
    if (p->p >= p->end || *p->p != '"') FAIL(p, "expected a key");
    SVal s;
    int esc = scan_string(p, &s, 0, NULL);
    if (esc < 0) return -1;
    if (esc) FAIL(p, "escaped key");
    *k = (const char *)p->base + s.off;
    *n = s.len;
    if (expect(p, ':')) FAIL(p, "expected ':'");
    return 0;
}

#define KEY(lit) (n == sizeof(lit) - 1 && !memcmp(k, lit, sizeof(lit) - 1))
#define ONCE(mask, bit) do { if ((mask) & (1u << (bit))) FAIL(p, "repeated key"); (mask) |= 1u << (bit); } while (0)

/* iterate the members of an object at p->p: body runs with k, n set; returns -1 on error */
#define FOR_MEMBERS(p, body)                                                              \
    do {                                                                                  \
        if (expect(p, '{')) FAIL(p, "expected an object");                                \
        skip_ws(p);                                                                       \
        if ((p)->p < (p)->end && *(p)->p == '}') { (p)->p++; break; }                     \
        for (;;) {                                                                        \
            const char *k;                                                                \
            size_t n;                                                                     \
            if (read_key(p, &k, &n)) return -1;                                           \
            body                                                                          \
            skip_ws(p);                                                                   \
            if ((p)->p >= (p)->end) FAIL(p, "unterminated object");                       \
            if (*(p)->p == ',') { (p)->p++; continue; }                                   \
            if (*(p)->p == '}') { (p)->p++; break; }                                      \
            FAIL(p, "expected ',' or '}'");                                               \
        }                                                                                 \
    } while (0)

static int read_block(P *p, Blk *b) {
    uint32_t seen = 0;
    memset(b, 0, sizeof *b);
    FOR_MEMBERS(p, {
        if (KEY("type")) { ONCE(seen, 0); if (read_str(p, &b->type, 1)) return -1; }
        else if (KEY("text")) {
            ONCE(seen, 1);
            SVal s = {0};
            if (read_str(p, &s, 0)) return -1;
            b->text_kind = s.kind;
            b->text_u16 = s.kind == V_STR ? s.u16 : 0;
        } else if (KEY("thinking")) {
            ONCE(seen, 2);
            SVal s = {0};
            if (read_str(p, &s, 0)) return -1;
            b->thinking_kind = s.kind;
            b->thinking_u16 = s.kind == V_STR ? s.u16 : 0;
        } else if (KEY("name")) { ONCE(seen, 3); if (read_str(p, &b->name, 1)) return -1; }
        else if (KEY("id")) { ONCE(seen, 4); if (read_str(p, &b->id, 1)) return -1; }
        else if (KEY("arguments")) {
            ONCE(seen, 5);
            skip_ws(p);
            const unsigned char *a0 = p->p;
            if ((b->args_kind = null_or_value(p)) < 0) return -1;
            if (b->args_kind == V_OBJ) { /* (null: the object model holds None, which counts 0) */
                int slow = 0;
                if (js_len_value(p, 1, &b->args_len, &slow)) return -1;
                b->args_slow = slow;
                b->args_off = (size_t)(a0 - p->base);
                b->args_raw_len = (size_t)(p->p - a0);
            }
        } else if (skip_value(p, 1)) return -1;
    });
    return 0;
}

static int read_content(P *p, Content *c) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    unsigned char ch = *p->p;
    if (ch == 'n') { c->kind = V_NULL; return scan_literal(p, "null", 4); }
    if (ch == '"') {
        SVal s;
        if (scan_string(p, &s, 0, NULL) < 0) return -1;
        c->kind = V_STR;
        c->u16 = s.u16;
        return 0;
    }
    if (ch != '[') FAIL(p, "content is neither a string nor a list");
    c->kind = V_LIST;
    c->first = p->blocks.len / sizeof(Blk);
    c->count = 0;
    p->p++;
    skip_ws(p);
    if (p->p < p->end && *p->p == ']') { p->p++; return 0; }
    for (;;) {
        Blk b;
        skip_ws(p);
        if (p->p >= p->end || *p->p != '{') FAIL(p, "a content block is not an object");
        if (read_block(p, &b)) return -1;
        if (buf_put(&p->blocks, &b, sizeof b)) FAIL(p, "out of memory");
        c->count++;
        skip_ws(p);
        if (p->p >= p->end) FAIL(p, "unterminated list");
        if (*p->p == ',') { p->p++; continue; }
        if (*p->p == ']') { p->p++; return 0; }
        FAIL(p, "expected ',' or ']'");
    }
}

/* a usage value (null or an object); depth: that of the object */
static int read_usage(P *p, Usage *u, int depth) {
    if ((u->kind = null_or_value(p)) < 0) return -1;
    if (u->kind != V_OBJ) return 0;
    FOR_MEMBERS(p, {
        if (KEY("input")) { ONCE(u->seen, 0); if (read_int(p, &u->input)) return -1; }
        else if (KEY("output")) { ONCE(u->seen, 1); if (read_int(p, &u->output_t)) return -1; }
        else if (KEY("cacheRead")) { ONCE(u->seen, 2); if (read_int(p, &u->cache_read)) return -1; }
        else if (KEY("cacheWrite")) { ONCE(u->seen, 3); if (read_int(p, &u->cache_write)) return -1; }
        else if (KEY("totalTokens")) { ONCE(u->seen, 4); if (read_int(p, &u->total)) return -1; }
        else if (KEY("cost")) {
            ONCE(u->seen, 5);
            if ((u->cost_kind = null_or_value(p)) < 0) return -1;
            if (u->cost_kind == V_OBJ) {
                FOR_MEMBERS(p, {
                    if (KEY("total")) { ONCE(u->seen_cost, 0); if (read_float(p, &u->cost)) return -1; }
                    else if (skip_value(p, depth + 1)) return -1;
                });
            }
        } else if (KEY("cacheWrite1h")) { ONCE(u->seen, 6); if (read_int(p, &u->cache_write_1h)) return -1; }
        else if (KEY("reasoning")) { ONCE(u->seen, 7); if (read_int(p, &u->reasoning)) return -1; }
        else if (skip_value(p, depth)) return -1;
    });
    return 0;
}

static int read_message(P *p, Msg *m) {
    FOR_MEMBERS(p, {
        if (KEY("role")) { ONCE(m->seen, MK_ROLE); if (read_str(p, &m->role, 1)) return -1; }
        else if (KEY("content")) { ONCE(m->seen, MK_CONTENT); if (read_content(p, &m->content)) return -1; }
        else if (KEY("api")) { ONCE(m->seen, MK_API); if (read_str(p, &m->api, 1)) return -1; }
        else if (KEY("provider")) { ONCE(m->seen, MK_PROVIDER); if (read_str(p, &m->provider, 1)) return -1; }
        else if (KEY("model")) { ONCE(m->seen, MK_MODEL); if (read_str(p, &m->model, 1)) return -1; }
        else if (KEY("usage")) { ONCE(m->seen, MK_USAGE); if (read_usage(p, &m->usage, 2)) return -1; }
        else if (KEY("stopReason")) { ONCE(m->seen, MK_STOP_REASON); if (read_str(p, &m->stop_reason, 1)) return -1; }
        else if (KEY("errorMessage")) { ONCE(m->seen, MK_ERROR_MESSAGE); if (read_str(p, &m->error_message, 1)) return -1; }
        else if (KEY("toolName")) { ONCE(m->seen, MK_TOOL_NAME); if (read_str(p, &m->tool_name, 1)) return -1; }
        else if (KEY("isError")) { ONCE(m->seen, MK_IS_ERROR); if (read_bool(p, &m->is_error)) return -1; }
        else if (KEY("customType")) { ONCE(m->seen, MK_CUSTOM_TYPE); if (read_str(p, &m->custom_type, 1)) return -1; }
        else if (KEY("command")) { ONCE(m->seen, MK_COMMAND); if (read_str(p, &m->command, 0)) return -1; }
        else if (KEY("output")) { ONCE(m->seen, MK_OUTPUT); if (read_str(p, &m->output, 0)) return -1; }
        else if (KEY("summary")) { ONCE(m->seen, MK_SUMMARY); if (read_str(p, &m->summary, 0)) return -1; }
        else if (KEY("responseModel")) { ONCE(m->seen, MK_RESPONSE_MODEL); if (read_str(p, &m->response_model, 1)) return -1; }
        else if (skip_value(p, 1)) return -1;
    });
    return 0;
}

static int read_entry(P *p, Ent *e) {
    FOR_MEMBERS(p, {
        if (KEY("type")) { ONCE(e->seen, 0); if (read_str(p, &e->type, 1)) return -1; }
        else if (KEY("id")) { ONCE(e->seen, 1); if (read_str(p, &e->id, 1)) return -1; }
        else if (KEY("parentId")) { ONCE(e->seen, 2); e->has_parent_id_key = 1; if (read_str(p, &e->parent, 1)) return -1; }
        else if (KEY("timestamp")) { ONCE(e->seen, 3); if (read_str(p, &e->timestamp, 1)) return -1; }
        else if (KEY("message")) {
            ONCE(e->seen, 4);
            if ((e->msg_kind = null_or_value(p)) < 0) return -1;
            if (e->msg_kind == V_OBJ && read_message(p, &e->m)) return -1;
        } else if (KEY("thinkingLevel")) { ONCE(e->seen, 5); if (read_str(p, &e->thinking, 1)) return -1; }
        else if (KEY("provider")) { ONCE(e->seen, 6); if (read_str(p, &e->provider, 1)) return -1; }
        else if (KEY("modelId")) { ONCE(e->seen, 7); if (read_str(p, &e->model_id, 1)) return -1; }
        else if (KEY("summary")) { ONCE(e->seen, 8); if (read_str(p, &e->summary, 0)) return -1; }
        else if (KEY("firstKeptEntryId")) { ONCE(e->seen, 9); if (read_str(p, &e->first_kept, 1)) return -1; }
        else if (KEY("tokensBefore")) { ONCE(e->seen, 10); if (read_int(p, &e->tokens_before)) return -1; }
        else if (KEY("retainedTail")) {
            ONCE(e->seen, 11);
            skip_ws(p);
            if (p->p >= p->end || *p->p != 'n') FAIL(p, "retained tail");
            if (scan_literal(p, "null", 4)) return -1;
        } else if (KEY("fromId")) { ONCE(e->seen, 12); if (read_str(p, &e->from_id, 1)) return -1; }
        else if (KEY("customType")) { ONCE(e->seen, 13); if (read_str(p, &e->custom_type, 1)) return -1; }
        else if (KEY("content")) { ONCE(e->seen, 14); if (read_content(p, &e->content)) return -1; }
        else if (KEY("targetId")) { ONCE(e->seen, 15); if (read_str(p, &e->target_id, 1)) return -1; }
        else if (KEY("label")) { ONCE(e->seen, 16); if (read_str(p, &e->label, 1)) return -1; }
        else if (KEY("name")) { ONCE(e->seen, 17); if (read_str(p, &e->name, 1)) return -1; }
        else if (KEY("version")) { ONCE(e->seen, 18); if (read_int(p, &e->version)) return -1; }
        else if (KEY("cwd")) { ONCE(e->seen, 19); if (read_str(p, &e->cwd, 1)) return -1; }
        else if (KEY("parentSession")) { ONCE(e->seen, 20); if (read_str(p, &e->parent_session, 1)) return -1; }
        else if (KEY("usage")) { ONCE(e->seen, 21); if (read_usage(p, &e->usage, 1)) return -1; }
        else if (KEY("kind")) { ONCE(e->seen, 22); if (read_str(p, &e->kind, 1)) return -1; }
        else if (KEY("model")) { ONCE(e->seen, 23); if (read_str(p, &e->model, 1)) return -1; }
        else if (KEY("parent_id")) { e->has_parent_snake_key = 1; if (skip_value(p, 1)) return -1; }
        else if (KEY("systemMessage")) { e->has_system_message = 1; if (skip_value(p, 1)) return -1; }
        else if (skip_value(p, 1)) return -1;
    });
    return 0;
}

#endif /* SESSIONLAB_SCAN_FIELDS_H */
