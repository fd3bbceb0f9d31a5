/* sessionlab._scan, part 1: strict JSON lexing for the scanner (included by _scan.c only).
 *
 * Growable buffers, the parser state, and the lexers: strings (validated UTF-8, lengths in
 * UTF-16 units, escapes decoded on request), numbers, literals, skipping a value, and the length
 * of JSON.stringify(value) computed from the raw text. Everything fails with FAIL(p, reason):
 * the caller then refuses the whole file.
 */
#ifndef SESSIONLAB_SCAN_JSON_H
#define SESSIONLAB_SCAN_JSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 128

/* ------------------------------------------------------------------ growable buffers */

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static int buf_grow(Buf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    char *p = (char *)realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, size_t n) {
    if (buf_grow(b, n)) return -1;
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static void buf_free(Buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------ parsed strings */

/* a string field: absent, null, or a string held in the input (no escapes) or in the arena */
enum { V_ABSENT = 0, V_NULL = 1, V_STR = 2, V_LIST = 3, V_OBJ = 4, V_NUM = 5, V_BOOL = 6 };

typedef struct {
    int kind;
    int in_arena;
    size_t off, len; /* bytes, into the input or the arena */
    int64_t u16;     /* JavaScript length of the decoded string */
} SVal;


/* ------------------------------------------------------------------ the parser */

typedef struct {
    const unsigned char *base, *p, *end;
    Buf arena;  /* unescaped strings of the current file */
    Buf blocks; /* content blocks of the current entry (Blk, _scan_fields.h) */
    const char *why;
} P;

#define FAIL(P, msg) do { (P)->why = (msg); return -1; } while (0)

static inline void skip_ws(P *p) {
    while (p->p < p->end && (*p->p == ' ' || *p->p == '\t')) p->p++;
}

static inline int expect(P *p, unsigned char c) {
    skip_ws(p);
    if (p->p >= p->end || *p->p != c) return -1;
    p->p++;
    return 0;
}

static int hex4(const unsigned char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* Length in bytes of a valid UTF-8 sequence at s (< end), 0 if invalid; *units: UTF-16 units. */
static inline int utf8_seq(const unsigned char *s, const unsigned char *end, int *units) {
    unsigned char c = s[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (end - s < 2 || (s[1] & 0xC0) != 0x80) return 0;
        *units = 1;
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - s < 3) return 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80) return 0;
        *units = 1;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - s < 4) return 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        *units = 2;
        return 4;
    }
    return 0;
}

static int put_utf8(Buf *b, uint32_t cp) {
    unsigned char t[4];
    size_t n;
    if (cp < 0x80) { t[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { t[0] = (unsigned char)(0xC0 | (cp >> 6)); t[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        t[0] = (unsigned char)(0xE0 | (cp >> 12)); t[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        t[0] = (unsigned char)(0xF0 | (cp >> 18)); t[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); t[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return buf_put(b, t, n);
}

/* Scan a string at p->p (the opening quote). Fills out->u16 (JavaScript length of the decoded
 * text); *js_extra (if given) gets what JSON.stringify adds beyond the decoded length and the two
 * quotes. With capture, out points at the bytes (the input when there is no escape, else the
 * decoded copy in the arena). Returns 1 if the string had an escape, 0 if not, -1 on error. */
static int scan_string(P *p, SVal *out, int capture, int64_t *js_extra) {
    const unsigned char *s = p->p + 1, *end = p->end, *start = s;
    int64_t u16 = 0, extra = 0;
    int esc = 0;
    for (;;) {
#if defined(__SSE2__)
        const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
        while (end - s >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)s);
            __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
                                     _mm_cmplt_epi8(v, sp)); /* signed: < 0x20 or >= 0x80 */
            int mask = _mm_movemask_epi8(m);
            if (mask) {
                int k = __builtin_ctz((unsigned)mask);
                s += k;
                u16 += k;
                break;
            }
            s += 16;
            u16 += 16;
        }
#endif
        if (s >= end) FAIL(p, "unterminated string");
        unsigned char c = *s;
        if (c == '"') break;
        if (c == '\\') {
            esc = 1;
            if (end - s < 2) FAIL(p, "bad escape");
            unsigned char e = s[1];
            switch (e) {
            case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
                extra += 1; /* JSON.stringify writes these back as two characters */
                u16 += 1;
                s += 2;
                break;
            case '/':
                u16 += 1;
                s += 2;
                break;
            case 'u': {
                uint32_t cp;
                if (end - s < 6 || hex4(s + 2, &cp)) FAIL(p, "bad \\u escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (end - s < 12 || s[6] != '\\' || s[7] != 'u' || hex4(s + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        FAIL(p, "lone surrogate escape");
                    u16 += 2;
                    s += 12;
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    FAIL(p, "lone surrogate escape");
                } else {
                    u16 += 1;
                    if (cp == '"' || cp == '\\' || cp == 8 || cp == 9 || cp == 10 || cp == 12 || cp == 13) extra += 1;
                    else if (cp < 0x20) extra += 5; /* \u00XX */
                    s += 6;
                }
                break;
            }
            default:
                FAIL(p, "bad escape");
            }
        } else if (c < 0x20) {
            FAIL(p, "control character in string");
        } else if (c >= 0x80) {
            int units;
            int n = utf8_seq(s, end, &units);
            if (!n) FAIL(p, "invalid UTF-8");
            s += n;
            u16 += units;
        } else {
            s++;
            u16++;
        }
    }
    /* s at the closing quote */
    if (out) {
        out->kind = V_STR;
        out->u16 = u16;
        out->in_arena = 0;
        out->off = (size_t)(start - p->base);
        out->len = (size_t)(s - start);
        if (capture && esc) {
            /* decode into the arena (the text is known valid) */
            size_t off = p->arena.len;
            const unsigned char *t = start;
            while (t < s) {
                if (*t != '\\') {
                    const unsigned char *r = t;
                    while (r < s && *r != '\\') r++;
                    if (buf_put(&p->arena, t, (size_t)(r - t))) FAIL(p, "out of memory");
                    t = r;
                    continue;
                }
                unsigned char e = t[1];
                uint32_t cp = 0;
                switch (e) {
                case '"': cp = '"'; t += 2; break;
                case '\\': cp = '\\'; t += 2; break;
                case '/': cp = '/'; t += 2; break;
                case 'b': cp = 8; t += 2; break;
                case 'f': cp = 12; t += 2; break;
                case 'n': cp = 10; t += 2; break;
                case 'r': cp = 13; t += 2; break;
                case 't': cp = 9; t += 2; break;
                default: {
                    hex4(t + 2, &cp);
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        uint32_t lo = 0xDC00;
                        hex4(t + 8, &lo);
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        t += 12;
                    } else {
                        t += 6;
                    }
                }
                }
                if (put_utf8(&p->arena, cp)) FAIL(p, "out of memory");
            }
            out->in_arena = 1;
            out->off = off;
            out->len = p->arena.len - off;
        }
    }
    if (js_extra) *js_extra = extra;
    p->p = s + 1;
    return esc;
}

/* A JSON number at p->p. Sets *is_int (no fraction or exponent), *ival when it is an integer
 * that fits int64 (else *fits = 0), and the token's extent. */
static int scan_number(P *p, int *is_int, int64_t *ival, int *fits, const unsigned char **tok, size_t *toklen) {
    const unsigned char *s = p->p, *end = p->end, *t0 = s;
    int neg = 0;
    if (s < end && *s == '-') { neg = 1; s++; }
    if (s >= end) FAIL(p, "bad number");
    const unsigned char *d0 = s;
    if (*s == '0') s++;
    else if (*s >= '1' && *s <= '9') { while (s < end && *s >= '0' && *s <= '9') s++; }
    else FAIL(p, "bad number");
    size_t ndig = (size_t)(s - d0);
    int integer = 1;
    if (s < end && *s == '.') {
        integer = 0;
        s++;
        if (s >= end || *s < '0' || *s > '9') FAIL(p, "bad number");
        while (s < end && *s >= '0' && *s <= '9') s++;
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        integer = 0;
        s++;
        if (s < end && (*s == '+' || *s == '-')) s++;
        if (s >= end || *s < '0' || *s > '9') FAIL(p, "bad number");
        while (s < end && *s >= '0' && *s <= '9') s++;
    }
    /* Python's json refuses integers over int_max_str_digits (4300 by default, 640 at least):
     * leave such a line to the tolerant path, which reports it */
    if (integer && ndig > 640) FAIL(p, "integer too long");
    *is_int = integer;
    *fits = 0;
    if (integer && ndig <= 18) {
        int64_t v = 0;
        for (const unsigned char *q = d0; q < d0 + ndig; q++) v = v * 10 + (*q - '0');
        *ival = neg ? -v : v;
        *fits = 1;
    }
    *tok = t0;
    *toklen = (size_t)(s - t0);
    p->p = s;
    return 0;
}

static int scan_literal(P *p, const char *lit, size_t n) {
    if ((size_t)(p->end - p->p) < n || memcmp(p->p, lit, n)) FAIL(p, "bad literal");
    p->p += n;
    return 0;
}

static int skip_value(P *p, int depth);

static int skip_container(P *p, int depth, int obj) {
    if (depth > MAX_DEPTH) FAIL(p, "nested too deep");
    p->p++; /* [ or { */
    skip_ws(p);
    unsigned char close = obj ? '}' : ']';
    if (p->p < p->end && *p->p == close) { p->p++; return 0; }
    for (;;) {
        if (obj) {
            skip_ws(p);
            if (p->p >= p->end || *p->p != '"') FAIL(p, "expected a key");
            if (scan_string(p, NULL, 0, NULL) < 0) return -1;
            if (expect(p, ':')) FAIL(p, "expected ':'");
        }
        if (skip_value(p, depth + 1)) return -1;
        skip_ws(p);
        if (p->p >= p->end) FAIL(p, "unterminated container");
        if (*p->p == ',') { p->p++; continue; }
        if (*p->p == close) { p->p++; return 0; }
        FAIL(p, "expected ',' or a closing bracket");
    }
}

static int skip_value(P *p, int depth) {
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    switch (*p->p) {
    case '{': return skip_container(p, depth, 1);
    case '[': return skip_container(p, depth, 0);
    case '"': return scan_string(p, NULL, 0, NULL) < 0 ? -1 : 0;
    case 't': return scan_literal(p, "true", 4);
    case 'f': return scan_literal(p, "false", 5);
    case 'n': return scan_literal(p, "null", 4);
    default: {
        int is_int, fits;
        int64_t v;
        const unsigned char *tok;
        size_t tl;
        return scan_number(p, &is_int, &v, &fits, &tok, &tl);
    }
    }
}

/* len(JSON.stringify(value)) of the value at p->p; *slow when that needs JavaScript's number
 * formatting or has repeated/escaped keys (the caller then measures the raw text in Python). */
static int js_len_value(P *p, int depth, int64_t *len, int *slow) {
    if (depth > MAX_DEPTH) FAIL(p, "nested too deep");
    skip_ws(p);
    if (p->p >= p->end) FAIL(p, "expected a value");
    unsigned char c = *p->p;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        unsigned char close = obj ? '}' : ']';
        int64_t total = 2, k = 0;
        enum { NKEYS = 64 };
        size_t koff[NKEYS], klen[NKEYS];
        p->p++;
        skip_ws(p);
        if (p->p < p->end && *p->p == close) { p->p++; *len = 2; return 0; }
        for (;;) {
            if (obj) {
                skip_ws(p);
                if (p->p >= p->end || *p->p != '"') FAIL(p, "expected a key");
                SVal key;
                int64_t kx;
                int esc = scan_string(p, &key, 0, &kx);
                if (esc < 0) return -1;
                if (esc) *slow = 1;
                if (k < NKEYS) {
                    for (int64_t i = 0; i < k; i++)
                        if (klen[i] == key.len && !memcmp(p->base + koff[i], p->base + key.off, key.len)) *slow = 1;
                    koff[k] = key.off;
                    klen[k] = key.len;
                } else {
                    *slow = 1;
                }
                total += 2 + key.u16 + kx + 1;
                if (expect(p, ':')) FAIL(p, "expected ':'");
            }
            int64_t vl = 0;
            if (js_len_value(p, depth + 1, &vl, slow)) return -1;
            total += vl;
            k++;
            skip_ws(p);
            if (p->p >= p->end) FAIL(p, "unterminated container");
            if (*p->p == ',') { p->p++; continue; }
            if (*p->p == close) { p->p++; break; }
            FAIL(p, "expected ',' or a closing bracket");
        }
        *len = total + (k - 1);
        return 0;
    }
    if (c == '"') {
        SVal s;
        int64_t x;
        if (scan_string(p, &s, 0, &x) < 0) return -1;
        *len = 2 + s.u16 + x;
        return 0;
    }
    if (c == 't') { *len = 4; return scan_literal(p, "true", 4); }
    if (c == 'f') { *len = 5; return scan_literal(p, "false", 5); }
    if (c == 'n') { *len = 4; return scan_literal(p, "null", 4); }
    int is_int, fits;
    int64_t v;
    const unsigned char *tok;
    size_t tl;
    if (scan_number(p, &is_int, &v, &fits, &tok, &tl)) return -1;
    /* JavaScript prints integers below 1e15 as written; "-0" prints as "0" */
    if (!is_int || tl - (*tok == '-') > 15 || (tl == 2 && tok[0] == '-' && tok[1] == '0')) *slow = 1;
    *len = (int64_t)tl;
    return 0;
}

#endif /* SESSIONLAB_SCAN_JSON_H */
