/* The seeded stream's integer draws, shared by truedeal._sampler and
 * truedeal._paired: the bytes (read from the Python bit source), scratch
 * buffers, Rng.below / Rng.below_wide, sorted searches and a parse helper.
 *
 * Each function consumes the random bytes in exactly the order and amounts
 * of its numpy reference in truedeal/randomness.py.  Included by one .c
 * file per extension module, so every function here is static (inline:
 * a module that does not call one is not warned about it).
 */
#ifndef TRUEDEAL_DRAWS_H
#define TRUEDEAL_DRAWS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCARDS 52

/* ------------------------------------------------------------ the bytes */

/* Read exactly n bytes from the Python bit source into dst (n may be 0:
 * then nothing is read, as numpy's read(0) consumes nothing either).  A
 * source with readinto (SeededBits) writes straight into dst; read(n) and
 * readinto of n bytes take the same bytes off the stream. */
static inline int read_bits(PyObject *bits, size_t n, uint8_t *dst) {
    if (!n) return 0;
    static PyObject *s_readinto = NULL, *s_read = NULL;
    if (!s_readinto && !(s_readinto = PyUnicode_InternFromString("readinto"))) return -1;
    if (!s_read && !(s_read = PyUnicode_InternFromString("read"))) return -1;
    int has = PyObject_HasAttr(bits, s_readinto);
    if (has) {
        PyObject *mv = PyMemoryView_FromMemory((char *)dst, (Py_ssize_t)n, PyBUF_WRITE);
        if (!mv) return -1;
        PyObject *r = PyObject_CallMethodOneArg(bits, s_readinto, mv);
        Py_DECREF(mv);
        if (!r) return -1;
        Py_ssize_t got = PyLong_AsSsize_t(r);
        Py_DECREF(r);
        if (got == -1 && PyErr_Occurred()) return -1;
        if ((size_t)got != n) {
            PyErr_SetString(PyExc_RuntimeError, "bit source filled the wrong number of bytes");
            return -1;
        }
        return 0;
    }
    PyObject *size = PyLong_FromSize_t(n);
    if (!size) return -1;
    PyObject *r = PyObject_CallMethodOneArg(bits, s_read, size);
    Py_DECREF(size);
    if (!r) return -1;
    Py_buffer v;
    if (PyObject_GetBuffer(r, &v, PyBUF_SIMPLE) < 0) {
        Py_DECREF(r);
        return -1;
    }
    int ok = (size_t)v.len == n;
    if (ok) memcpy(dst, v.buf, n);
    PyBuffer_Release(&v);
    Py_DECREF(r);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "bit source returned the wrong number of bytes");
        return -1;
    }
    return 0;
}

static inline uint64_t le(const uint8_t *p, int nbytes) {
    uint64_t x = 0;
    for (int i = nbytes - 1; i >= 0; i--) x = x << 8 | p[i];
    return x;
}


/* ------------------------------------------------------------ scratch */

/* Work arrays, one slot per use, kept and grown across calls: fresh large
 * mallocs here would be fresh pages, zeroed by the kernel at every call.
 * Only buffers up to SLOT_KEEP bytes are kept (a chunk's draws need far
 * less): a one-off large draw, such as a rejection plan's 200,000-deal
 * pilot, gets heap memory that it gives back, so that a long-lived process
 * (a worker, a count helper) does not hold hundreds of MB after it.
 * The slots are distinct for functions that call one another (deal ->
 * below -> lemire).  A slot is lent to one call at a time: the bit source's
 * Python code may let another thread run this module meanwhile, and that
 * call then gets heap memory instead (grab and drop run under the GIL). */
enum { S_LEMIRE, S_B64, S_IDX, S_W_TODO, S_W_BND, S_W_H, S_W_BUF, S_LISTS, S_LENGTH, S_DRAW,
       S_COUNTS, S_C1, S_LOC_R, S_WL_HI, S_WL_LO, S_L1_BND, S_L1_DRAW, S_P_BND, S_P_DRAW, S_P_BUF, S_P_R, S_P_AUX, S_P_SPLIT, S_ARENA, S_OPTS, S_LEN8,
       S_POOL_TOTAL, S_POOL_R, S_P_ORDER, S_P_COUNT, S_P_GROUPED, S_LEN16, N_SLOTS };
static void *slot_buf[N_SLOTS];
static size_t slot_cap[N_SLOTS];
static int slot_busy[N_SLOTS];

#define SLOT_KEEP ((size_t)16 << 20)

static inline void *grab(int slot, size_t bytes) {
    if (slot_busy[slot] || bytes > SLOT_KEEP) return malloc(bytes);
    if (bytes > slot_cap[slot]) {
        size_t cap = bytes + bytes / 2 + 64;
        void *p = realloc(slot_buf[slot], cap);
        if (!p) return NULL;
        slot_buf[slot] = p;
        slot_cap[slot] = cap;
    }
    slot_busy[slot] = 1;
    return slot_buf[slot];
}

/* Give back what grab(slot, ...) returned (NULL is fine). */
static inline void drop(int slot, void *p) {
    if (p == NULL) return;
    if (p == slot_buf[slot])
        slot_busy[slot] = 0;
    else
        free(p);
}

/* ------------------------------------------------------------ integer draws */

/* Lemire's multiply-shift on `bits`-bit words (16 or 32) for the bounds
 * b[idx[0..cnt)], all below 2**bits; results into out[idx[k]].  Mirrors
 * Rng._lemire: one read for every index, then the rejected ones, in index
 * order, again (its recursion is these rounds). */
static inline int lemire(PyObject *bits, const int64_t *b, int64_t *out, int64_t *idx, size_t cnt, int nbits) {
    int w = nbits / 8;
    uint64_t span = (uint64_t)1 << nbits, mask = span - 1;
    uint8_t *buf = grab(S_LEMIRE, cnt * w + 1);
    if (!buf) {
        PyErr_NoMemory();
        return -1;
    }
    while (cnt) {
        if (read_bits(bits, cnt * w, buf) < 0) {
            drop(S_LEMIRE, buf);
            return -1;
        }
        size_t bad = 0;
        if (nbits == 16) { /* the common case (every deal's draws), kept simple for the compiler */
            for (size_t k = 0; k < cnt; k++) {
                int64_t i = idx[k];
                uint32_t bi = (uint32_t)b[i];
                uint32_t m = (uint32_t)(buf[2 * k] | buf[2 * k + 1] << 8) * bi;
                out[i] = (int64_t)(m >> 16);
                uint32_t low = m & 0xFFFF;
                if (__builtin_expect(low < bi, 0) && low < (65536u - bi) % bi) idx[bad++] = i;
            }
        } else {
            for (size_t k = 0; k < cnt; k++) {
                int64_t i = idx[k];
                uint64_t bi = (uint64_t)b[i];
                uint64_t m = le(buf + k * w, w) * bi; /* < 2**(2 nbits) <= 2**64 */
                out[i] = (int64_t)(m >> nbits);
                uint64_t low = m & mask;
                if (low < bi && low < (span - bi) % bi) idx[bad++] = i;
            }
        }
        cnt = bad;
    }
    drop(S_LEMIRE, buf);
    return 0;
}

/* Bit-mask rejection on 64-bit words (Rng._below64) for b[idx[0..cnt)]. */
static inline int below64(PyObject *bits, const int64_t *b, int64_t *out, int64_t *idx, size_t cnt) {
    uint8_t *buf = grab(S_B64, cnt * 8 + 1);
    if (!buf) {
        PyErr_NoMemory();
        return -1;
    }
    while (cnt) {
        if (read_bits(bits, cnt * 8, buf) < 0) {
            drop(S_B64, buf);
            return -1;
        }
        size_t left = 0;
        for (size_t k = 0; k < cnt; k++) {
            int64_t i = idx[k];
            uint64_t bm1 = (uint64_t)b[i] - 1;
            int nb = bm1 ? 64 - __builtin_clzll(bm1) : 0;
            uint64_t r = le(buf + 8 * k, 8) & (((uint64_t)1 << nb) - 1); /* nb <= 63 */
            if (r < (uint64_t)b[i])
                out[i] = (int64_t)r;
            else
                idx[left++] = i;
        }
        cnt = left;
    }
    drop(S_B64, buf);
    return 0;
}

/* A step's bit source: one bits object, or a tuple of (bits, rows) pairs, one
 * per chunk of consecutive rows.  Each chunk's r are then drawn from its own
 * bits, as a draw of that chunk alone would draw them; the scans that follow
 * take every chunk's rows together.
 * part_of gives part k's bits (through *src) and its count of rows, at most
 * `left`, or -1 with an exception set. */
static Py_ssize_t part_of(PyObject *bits, Py_ssize_t k, size_t left, PyObject **src) {
    PyObject *item = PyTuple_GET_ITEM(bits, k);
    Py_ssize_t rows = -1;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || (rows = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 1))) < 0 ||
        (size_t)rows > left) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bits parts are (bits, rows) pairs within the rows");
        return -1;
    }
    *src = PyTuple_GET_ITEM(item, 0);
    return rows;
}

/* Rng.below: one uniform integer in [0, b[i]) per bound, same bytes. */
static inline int below(PyObject *bits, const int64_t *b, int64_t *out, size_t n) {
    if (!n) return 0;
    int64_t mn = b[0], mx = b[0];
    for (size_t i = 1; i < n; i++) {
        if (b[i] < mn) mn = b[i];
        if (b[i] > mx) mx = b[i];
    }
    if (mn < 1) {
        PyErr_SetString(PyExc_ValueError, "bounds must be >= 1");
        return -1;
    }
    int64_t *idx = grab(S_IDX, n * sizeof *idx);
    if (!idx) {
        PyErr_NoMemory();
        return -1;
    }
    int rc;
    if (mx < (1 << 16)) {
        for (size_t i = 0; i < n; i++) idx[i] = (int64_t)i;
        rc = lemire(bits, b, out, idx, n, 16);
    } else {
        size_t ns = 0; /* the small bounds first (all of them, retries included), then the big */
        for (size_t i = 0; i < n; i++)
            if (b[i] < ((int64_t)1 << 32)) idx[ns++] = (int64_t)i;
        rc = lemire(bits, b, out, idx, ns, 32);
        if (!rc && ns < n) {
            size_t nb = 0;
            for (size_t i = 0; i < n; i++)
                if (b[i] >= ((int64_t)1 << 32)) idx[nb++] = (int64_t)i;
            rc = below64(bits, b, out, idx, nb);
        }
    }
    drop(S_IDX, idx);
    return rc;
}

/* One draw below bounds, of 64-bit or 128-bit words (below here, below_int128 in _paired.c). */
typedef int (*below_fn)(PyObject *bits, const void *bound, void *r, size_t n);

static int words64(PyObject *bits, const void *bound, void *r, size_t n) { return below(bits, bound, r, n); }

/* draw over rows [0, n) of `size`-byte words, by parts when bits is a tuple of them. */
static int by_parts(below_fn draw, size_t size, PyObject *bits, const void *bound, void *r, size_t n) {
    if (!PyTuple_Check(bits)) return draw(bits, bound, r, n);
    size_t at = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(bits); k++) {
        PyObject *src;
        Py_ssize_t rows = part_of(bits, k, n - at, &src);
        if (rows < 0 || draw(src, (const char *)bound + at * size, (char *)r + at * size, (size_t)rows) < 0) return -1;
        at += (size_t)rows;
    }
    return at == n ? 0 : (PyErr_SetString(PyExc_ValueError, "the bits parts do not cover the rows"), -1);
}

/* Rng.below_wide: n integers r < bound, bound - 1 = top * 2**shift + low_max,
 * as (hi, lo) = (r >> shift, r & (2**shift - 1)). */
static inline int below_wide(PyObject *bits, int64_t top, uint64_t low_max, int shift, int64_t *hi, uint64_t *lo, size_t n) {
    if (top < 0 || top == INT64_MAX || shift < 0 || shift > 64) {
        PyErr_SetString(PyExc_ValueError, "bound too wide for this shift");
        return -1;
    }
    uint64_t low_mask = shift == 64 ? ~(uint64_t)0 : ((uint64_t)1 << shift) - 1;
    size_t cnt = n;
    int64_t *todo = grab(S_W_TODO, (n + 1) * 8), *bnd = grab(S_W_BND, (n + 1) * 8), *h = grab(S_W_H, (n + 1) * 8);
    uint8_t *buf = grab(S_W_BUF, n * 8 + 1);
    int rc = 0;
    if (!todo || !bnd || !h || !buf) {
        PyErr_NoMemory();
        rc = -1;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        todo[i] = (int64_t)i;
        bnd[i] = top + 1;
    }
    while (cnt) {
        if ((rc = below(bits, bnd, h, cnt)) < 0) goto done;
        if (shift && (rc = read_bits(bits, cnt * 8, buf)) < 0) goto done;
        size_t left = 0;
        for (size_t k = 0; k < cnt; k++) {
            uint64_t low = shift ? le(buf + 8 * k, 8) & low_mask : 0;
            if (h[k] < top || low <= low_max) {
                hi[todo[k]] = h[k];
                lo[todo[k]] = low;
            } else {
                todo[left++] = todo[k];
            }
        }
        cnt = left;
    }
done:
    drop(S_W_TODO, todo);
    drop(S_W_BND, bnd);
    drop(S_W_H, h);
    drop(S_W_BUF, buf);
    return rc;
}

/* ------------------------------------------------------------ searches */

/* The searches halve a window that holds the answer without a branch on the
 * comparison (a conditional move): the draws land anywhere in their tables,
 * so a branch would mispredict about half the time at every level. */

/* numpy.searchsorted(a, x, side="left"): the first i with a[i] >= x. */
static inline size_t lower(const int64_t *a, size_t n, int64_t x) {
    if (!n) return 0;
    const int64_t *base = a;
    for (size_t len = n, half; len > 1; len -= half) {
        half = len / 2;
        base = base[half] < x ? base + half : base;
    }
    return (size_t)(base - a) + (*base < x);
}

/* numpy.searchsorted(a, x, side="right"): the first i with a[i] > x. */
static inline size_t upper(const int64_t *a, size_t n, int64_t x) {
    if (!n) return 0;
    const int64_t *base = a;
    for (size_t len = n, half; len > 1; len -= half) {
        half = len / 2;
        base = base[half] <= x ? base + half : base;
    }
    return (size_t)(base - a) + (*base <= x);
}


/* Parse helper: a buffer whose size must be a multiple of `item`. */
static inline int sized(Py_buffer *v, size_t item, size_t *n, const char *what) {
    if (v->len % item) {
        PyErr_Format(PyExc_ValueError, "%s: buffer size is not a multiple of %zu", what, item);
        return -1;
    }
    *n = (size_t)v->len / item;
    return 0;
}

#endif
