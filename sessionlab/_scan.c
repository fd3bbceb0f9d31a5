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

#include "_scan_rows.h"

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
    int64_t cross_rows; /* rows whose values need other lines of the file (tables/_pi16.py) */
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
        const int64_t line_start = (int64_t)(s - buf);
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
        if (t == T_CONTEXT_EDIT || (t == T_COMPACTION && e.has_system_message) ||
            (t == T_MESSAGE && e.msg_kind == V_OBJ && e.m.role.kind == V_STR && sv_eq(p, &e.m.role, "system")))
            ff->cross_rows++;
        Link lk = {e.id, e.parent};
        if (buf_put(&sc->links, &lk, sizeof lk)) FAIL(p, "out of memory");
        if (buf_put(&sc->line_starts, &line_start, sizeof line_start) || emit_entry(sc, &e, t, line, (int32_t)ff->n)) {
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
    buf_free(&sc->line_starts);
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
"add(data: bytes-like) -> tuple | str\n\n"
"Scan one file's bytes and append its rows. Returns (entries, blocks, session_id, cwd,\n"
"parent_session, header_timestamp, name, leaf_id, leaf_count, cross_rows), or the reason (a str)\n"
"when the file is refused, in which case nothing of it is kept. cross_rows counts the context\n"
"edits, system messages and compactions with a systemMessage: their values need other lines.");

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
    size_t slow0 = self->slow.len, slowb0 = self->slow_bytes.len, starts0 = self->line_starts.len;
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
        self->line_starts.len = starts0;
        if (p->why && !strcmp(p->why, "out of memory")) PyErr_NoMemory();
        else out = PyUnicode_FromString(p->why ? p->why : "refused");
    } else {
        const Link *links = (const Link *)self->links.p;
        PyObject *leaf = ff.n ? sval_obj(p, &links[ff.n - 1].id) : (Py_INCREF(Py_None), Py_None);
        PyObject *name = ff.name_entry >= 0 ? sval_obj(p, &ff.name) : (Py_INCREF(Py_None), Py_None);
        out = Py_BuildValue("(LLNNNNNNLL)", (long long)ff.n, (long long)(self->block_rows - brows0),
                            sval_obj(p, &ff.header.id), sval_obj(p, &ff.header.cwd), sval_obj(p, &ff.header.parent_session),
                            sval_obj(p, &ff.header.timestamp), name, leaf, (long long)ff.leaf_count,
                            (long long)ff.cross_rows);
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
"'slow': bytes of int64 (row, block_row, offset, length) records, 'slow_bytes': bytes,\n"
"'line_starts': bytes of int64, where each entry row's line starts in its file's bytes}.");

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
    PyObject *out = Py_BuildValue("{sLsLsNsNsy#sy#sy#}", "rows", (long long)self->rows, "block_rows",
                                  (long long)self->block_rows, "entries", ents, "blocks", blks, "slow",
                                  self->slow.p ? self->slow.p : "", (Py_ssize_t)self->slow.len, "slow_bytes",
                                  self->slow_bytes.p ? self->slow_bytes.p : "", (Py_ssize_t)self->slow_bytes.len,
                                  "line_starts", self->line_starts.p ? self->line_starts.p : "",
                                  (Py_ssize_t)self->line_starts.len);
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

/* One of pi's timestamps (JavaScript's toISOString: 2026-01-15T10:00:38.500Z, 0-3 fraction digits)
 * as Unix milliseconds, as Python's datetime.fromisoformat reads it; 0 for any other form or for a
 * date that does not exist (year 0, February 30, 24:00, second 60), which Python then parses. */
static int pi_timestamp_ms(const unsigned char *s, size_t n, int64_t *out) {
    static const char form[] = "dddd-dd-ddTdd:dd:dd";
    if (n < 20 || n > 24 || s[n - 1] != 'Z') return 0;
    for (size_t i = 0; i < 19; i++)
        if (form[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != (unsigned char)form[i]) return 0;
    int64_t frac = 0;
    if (n > 20) {
        if (s[19] != '.' || n == 21) return 0;
        for (size_t i = 20; i < n - 1; i++) {
            if (s[i] < '0' || s[i] > '9') return 0;
            frac = frac * 10 + (s[i] - '0');
        }
        for (size_t i = n - 1; i < 23; i++) frac *= 10; /* .5 is 500 ms */
    }
#define D2(i) ((s[i] - '0') * 10 + (s[i + 1] - '0'))
    int64_t y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + D2(2), m = D2(5), d = D2(8);
    int64_t hh = D2(11), mm = D2(14), ss = D2(17);
#undef D2
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && leap) || hh > 23 || mm > 59 || ss > 59)
        return 0;
    /* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
    int64_t yy = m <= 2 ? y - 1 : y;
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    *out = ((days * 24 + hh) * 60 + mm) * 60000 + ss * 1000 + frac;
    return 1;
}


PyDoc_STRVAR(pi_timestamps_doc,
"pi_timestamps(ends, data, valid) -> (ms, ok)\n\n"
"A string column's buffers (int32 end offsets, bytes, one validity byte per row, as finish()\n"
"gives them) read as pi's timestamps: int64 Unix milliseconds and one byte per row, 1 where the\n"
"value has pi's form (2026-01-15T10:00:38.500Z) and is a real date, else 0 (the caller parses\n"
"those rows its own way).");

static int32_t end_at(const unsigned char *ends, Py_ssize_t i) {
    int32_t v;
    memcpy(&v, ends + 4 * i, sizeof v);
    return v;
}

static PyObject *pi_timestamps(PyObject *mod, PyObject *args) {
    Py_buffer ends, data, valid;
    (void)mod;
    if (!PyArg_ParseTuple(args, "y*y*y*", &ends, &data, &valid)) return NULL;
    PyObject *ms = NULL, *ok = NULL, *out = NULL;
    Py_ssize_t n = valid.len;
    const unsigned char *e = (const unsigned char *)ends.buf; /* (any alignment: read with memcpy) */
    int bad = ends.len != n * 4;
    for (Py_ssize_t i = 0; !bad && i < n; i++) /* offsets rise and stay inside the data */
        bad = end_at(e, i) < (i ? end_at(e, i - 1) : 0) || end_at(e, i) > data.len;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "pi_timestamps: offsets do not match the data");
        goto done;
    }
    ms = PyBytes_FromStringAndSize(NULL, n * 8);
    ok = PyBytes_FromStringAndSize(NULL, n);
    if (!ms || !ok) goto done;
    int64_t *m = (int64_t *)PyBytes_AS_STRING(ms);
    char *k = PyBytes_AS_STRING(ok);
    const unsigned char *d = (const unsigned char *)data.buf, *v = (const unsigned char *)valid.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t a = i ? end_at(e, i - 1) : 0;
        m[i] = 0;
        k[i] = (char)(v[i] && pi_timestamp_ms(d + a, (size_t)(end_at(e, i) - a), &m[i]));
    }
    Py_END_ALLOW_THREADS
    out = PyTuple_Pack(2, ms, ok);
done:
    Py_XDECREF(ms);
    Py_XDECREF(ok);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&data);
    PyBuffer_Release(&valid);
    return out;
}

static PyMethodDef module_methods[] = {
    {"pi_timestamps", pi_timestamps, METH_VARARGS, pi_timestamps_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "Native scanner of clean pi v3 session files (the loader's fast path).", -1, module_methods, NULL, NULL, NULL,
    NULL,
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
