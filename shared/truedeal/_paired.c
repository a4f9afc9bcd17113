/* truedeal._paired: the draws of truedeal.paired_sampling (a listing
 * aggregated by spades+hearts pair) in C.
 *
 * Each function makes the same draws from the same bytes, in the same order,
 * as the numpy step it replaces (tests/test_paired.py checks whole deals byte
 * for byte).  Weights that pass int64 (a group's W and the products
 * T1[z1] * Y[z1]) are below the number of deals, 2**96, so they are exact in
 * unsigned __int128.
 *
 *   z1(bits, q, w_hi u8, w_lo u8, d0, d1, d2, k, width, tables, group_table, y, out)
 *                                          PairedSampler._z1
 *   z2(bits, q, z1, y, v, accept_ptr, accept_idx, accept_w, group_sig, out)
 *                                          PairedSampler._z2
 *   cell(bits, q, z2, v, group_start, cell_order, tables, cell_table, out)
 *                                          PairedSampler._cell
 *   split(bits, ca, cb, z, total, support, support_packed, z_packed, guard, z_flat, g, n_used, pos, va, vb)
 *                                          PairedSampler._split
 *
 * All arrays are C-contiguous int64 unless said otherwise; indices are
 * checked, so a malformed call raises instead of reading out of bounds.
 */
#include "_draws.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------ big draws */

/* Rng.below_int for each row's bound: k = bit length of bound - 1, then
 * ceil(k / 8) bytes big-endian, shifted down to k bits, until one is below
 * the bound.  Rows read one after another, so the bytes are read in bulk:
 * at each refill exactly what the rows left would take with no rejection,
 * which is never more than they do take. */
static int below_int128(PyObject *bits, const u128 *bound, size_t n, u128 *out) {
    size_t need = 0;
    int *nb = grab(S_P_DRAW, (n + 1) * sizeof *nb);
    if (!nb) goto nomem;
    for (size_t r = 0; r < n; r++) {
        u128 m = bound[r] - 1;
        int k = 0;
        while (m >> k) k++;
        nb[r] = (k + 7) / 8;
        need += (size_t)nb[r];
    }
    uint8_t *buf = grab(S_P_BUF, need + 1);
    if (!buf) goto nomem;
    size_t have = 0, at = 0;
    for (size_t r = 0; r < n; r++) {
        int k = 0;
        while ((bound[r] - 1) >> k) k++;
        for (;;) {
            if (at + (size_t)nb[r] > have) { /* rejections used up the bytes: keep the rest, read what is left */
                memmove(buf, buf + at, have - at);
                have -= at;
                at = 0;
                if (read_bits(bits, need - have, buf + have) < 0) {
                    drop(S_P_BUF, buf);
                    drop(S_P_DRAW, nb);
                    return -1;
                }
                have = need;
            }
            u128 x = 0;
            for (int i = 0; i < nb[r]; i++) x = x << 8 | buf[at + i];
            at += (size_t)nb[r];
            x >>= 8 * nb[r] - k;
            if (x < bound[r]) {
                out[r] = x;
                break;
            }
        }
        need -= (size_t)nb[r];
    }
    drop(S_P_BUF, buf);
    drop(S_P_DRAW, nb);
    return 0;
nomem:
    drop(S_P_DRAW, nb);
    PyErr_NoMemory();
    return -1;
}

/* ------------------------------------------------------------ the steps */

typedef struct {
    size_t n_q, n_z, n_t;
} Dims;

/* z1: r below W_q; the first block (of `width` vectors) whose running sum
 * of block sums exceeds r, then the first vector inside it whose running
 * sum of T1[z1] * Y_q[z1] exceeds what is left of r. */
static int draw_z1(PyObject *bits, const Dims *D, const int64_t *q, size_t n, const u128 *w, const int64_t *const d[3],
                   int k, size_t width, const int64_t *tables, const int64_t *group_table, const int64_t *y, int64_t *out) {
    size_t n_blocks = (D->n_z + width - 1) / width;
    u128 *bound = grab(S_P_BND, (n + 1) * sizeof *bound), *r = grab(S_P_R, (n + 1) * sizeof *r);
    int rc = -1;
    if (!bound || !r) {
        PyErr_NoMemory();
        goto out;
    }
    for (size_t i = 0; i < n; i++) bound[i] = w[q[i]];
    if (below_int128(bits, bound, n, r) < 0) goto out;
    for (size_t i = 0; i < n; i++) {
        size_t row = (size_t)q[i] * n_blocks, b = 0;
        u128 cum = 0;
        for (; b < n_blocks; b++) {
            u128 s = (u128)d[0][row + b] + ((u128)d[1][row + b] << k) + ((u128)d[2][row + b] << 2 * k);
            if (cum + s > r[i]) break;
            cum += s;
        }
        if (b == n_blocks) b = 0; /* not reached for r below W; numpy's argmax gives 0 */
        const int64_t *t1 = tables + (size_t)group_table[q[i]] * D->n_z, *yq = y + (size_t)q[i] * D->n_z;
        size_t z = b * width, end = z + width < D->n_z ? z + width : D->n_z, first = z;
        for (; z < end; z++) {
            cum += (u128)t1[z] * (u128)yq[z];
            if (cum > r[i]) break;
        }
        out[i] = (int64_t)(z < end ? z : first);
    }
    rc = 0;
out:
    drop(S_P_BND, bound);
    drop(S_P_R, r);
    return rc;
}

/* r[i] below table[rows[i] * stride + cols[i]] for each i (one Rng.below
 * call): the draws of z2 and of the cell.  Returns r (give it back with
 * drop(S_P_DRAW, r)), or NULL with an exception set. */
static int64_t *below_entries(PyObject *bits, const int64_t *table, const int64_t *rows, const int64_t *cols, size_t stride,
                              size_t n) {
    int64_t *bound = grab(S_P_BND, (n + 1) * 8), *r = grab(S_P_DRAW, (n + 1) * 8);
    if (!bound || !r) {
        PyErr_NoMemory();
    } else {
        for (size_t i = 0; i < n; i++) bound[i] = table[(size_t)rows[i] * stride + (size_t)cols[i]];
        if (below(bits, bound, r, n) == 0) {
            drop(S_P_BND, bound);
            return r;
        }
    }
    drop(S_P_BND, bound);
    drop(S_P_DRAW, r);
    return NULL;
}

/* The accepted z2 of each (signature, z1), ascending: row k = sig * n_z + z1
 * holds idx[ptr[k] .. ptr[k + 1]) and their weights w (the accept matrix in
 * compressed rows: a few percent of it is set, so a scan reads those entries
 * alone; the weights are 1, or a rank pool's ways). */
typedef struct {
    const int64_t *ptr, *idx, *w;
    size_t rows, nnz;
} Accepted;

/* z2: r below Y_q[z1], then the first z2 whose running sum of
 * V_q[z2] * accept[sig_q][z1][z2] (below Y, so within int64) exceeds r: the same z2 as a scan of every
 * z2, since the sum grows only at accepted ones. */
static int draw_z2(PyObject *bits, const Dims *D, const int64_t *q, const int64_t *z1, size_t n, const int64_t *y,
                   const int64_t *v, const Accepted *A, const int64_t *sig, int64_t *out) {
    int64_t *r = below_entries(bits, y, q, z1, D->n_z, n);
    if (!r) return -1;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        const int64_t *vq = v + (size_t)q[i] * D->n_z;
        size_t row = (size_t)sig[q[i]] * D->n_z + (size_t)z1[i];
        int64_t from = A->ptr[row], to = A->ptr[row + 1], sum = 0, j = from;
        bad = from < 0 || to < from || (size_t)to > A->nnz;
        for (; !bad && j < to; j++) {
            int64_t z = A->idx[j];
            if ((bad = z < 0 || (size_t)z >= D->n_z)) break;
            sum += vq[z] * A->w[j];
            if (sum > r[i]) break;
        }
        out[i] = j < to ? A->idx[j] : (int64_t)D->n_z; /* n_z: not reached for r below Y_q[z1] */
    }
    drop(S_P_DRAW, r);
    if (bad) PyErr_SetString(PyExc_IndexError, "paired: accepted z2 out of range");
    return bad ? -1 : 0;
}

/* The cell: r below V_q[z2], then the first cell of the group's run whose
 * running sum of T2[its D+C table][z2] exceeds r. */
static int draw_cell(PyObject *bits, const Dims *D, const int64_t *q, const int64_t *z2, size_t n, const int64_t *v,
                     const int64_t *start, const int64_t *order, const int64_t *tables, const int64_t *cell_table,
                     int64_t *out) {
    int64_t *r = below_entries(bits, v, q, z2, D->n_z, n);
    if (!r) return -1;
    for (size_t i = 0; i < n; i++) {
        const int64_t *run = order + start[q[i]];
        size_t size = (size_t)(start[q[i] + 1] - start[q[i]]), j = 0;
        int64_t sum = 0;
        for (; j < size; j++) {
            sum += tables[(size_t)cell_table[run[j]] * D->n_z + (size_t)z2[i]];
            if (sum > r[i]) break;
        }
        out[i] = run[j < size ? j : 0]; /* j == size is not reached for r below V_q[z2] */
    }
    drop(S_P_DRAW, r);
    return 0;
}

typedef struct {
    const int64_t *support, *support_packed, *z_packed, *z_flat, *g, *pos;
    size_t width, zsize, n_used; /* g is (n_cols, n_used); pos maps a flat vector to its column of g, or -1 */
    int64_t guard;
} Splits;

/* g at (col, flat vector); 0 where no column reaches it.  A pos out of range
 * reads 0 too: the split's weights then miss their table, which is an error. */
static inline int64_t weight_at(const Splits *S, int64_t col, int64_t flat) {
    int64_t at = S->pos[flat];
    return at < 0 || (size_t)at >= S->n_used ? 0 : S->g[(size_t)col * S->n_used + (size_t)at];
}

/* The weight of splitting pair vector z into support entry j of column ca
 * and the rest in column cb (0 when the rest has a negative coordinate). */
static inline int64_t split_weight(const Splits *S, int64_t ca, int64_t cb, int64_t z, size_t j, int64_t *vb) {
    int64_t va = S->support[(size_t)ca * S->width + j];
    /* -1 pads a column's support; a value past zsize (never made) weighs 0 too, so a malformed call ends in
     * "not the sum of its splits" instead of reading out of bounds, without a scan of the table per call */
    if (va < 0 || (size_t)va >= S->zsize) return 0;
    if (((S->z_packed[z] - S->support_packed[(size_t)ca * S->width + j]) & S->guard) != S->guard) return 0;
    *vb = S->z_flat[z] - va;
    if (*vb < 0 || (size_t)*vb >= S->zsize) return 0;
    return weight_at(S, ca, va) * weight_at(S, cb, *vb);
}

/* Each pair vector z into its two suits' flat vectors: r below the pair's
 * table at z (total[i], the sum of its splits' weights), then the first
 * split whose running sum exceeds r.  A table that is not that sum is an
 * error, not a wrong draw. */
static int draw_split(PyObject *bits, const Splits *S, const int64_t *ca, const int64_t *cb, const int64_t *z,
                      const int64_t *total, size_t n, int64_t *va, int64_t *vb) {
    int64_t *r = grab(S_P_DRAW, (n + 1) * 8), rest;
    int rc = -1;
    if (!r) {
        PyErr_NoMemory();
        goto out;
    }
    if (below(bits, total, r, n) < 0) goto out;
    for (size_t i = 0; i < n; i++) {
        int64_t acc = 0;
        size_t j = 0;
        for (; j < S->width; j++) {
            acc += split_weight(S, ca[i], cb[i], z[i], j, &rest);
            if (acc > r[i]) break;
        }
        if (j == S->width) {
            PyErr_SetString(PyExc_ValueError, "paired: a pair table is not the sum of its splits");
            goto out;
        }
        va[i] = S->support[(size_t)ca[i] * S->width + j];
        vb[i] = rest;
    }
    rc = 0;
out:
    drop(S_P_DRAW, r);
    return rc;
}

/* ------------------------------------------------------------ Python glue */

static void release(Py_buffer *v, int n) {
    for (int i = 0; i < n; i++) PyBuffer_Release(&v[i]);
}

/* Every value of idx[0..n) lies in [0, hi). */
static int in_range(const int64_t *idx, size_t n, int64_t hi, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= hi) {
            PyErr_Format(PyExc_IndexError, "paired: %s out of range", what);
            return -1;
        }
    return 0;
}

/* The buffer holds rows * cols int64 (or bytes, for item 1). */
static int shaped(const Py_buffer *v, size_t rows, size_t cols, size_t item, const char *what) {
    if ((size_t)v->len != rows * cols * item) {
        PyErr_Format(PyExc_ValueError, "paired: %s has the wrong size", what);
        return -1;
    }
    return 0;
}

static PyObject *p_z1(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[10]; /* q, w_hi, w_lo, d0, d1, d2, tables, group_table, y, out */
    int k;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*iny*y*y*w*", &bits, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &k, &width,
                          &b[6], &b[7], &b[8], &b[9]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = (size_t)b[1].len / 8, n_t = (size_t)b[6].len / 8;
    Dims D = {n_q, n_q ? (size_t)b[8].len / 8 / n_q : 0, 0};
    size_t n_blocks = width > 0 ? (D.n_z + (size_t)width - 1) / (size_t)width : 0;
    int rc = width < 1 || k < 1 || k > 31 || !D.n_z ? (PyErr_SetString(PyExc_ValueError, "paired: bad z1 shape"), -1) : 0;
    if (!rc) D.n_t = n_t / D.n_z;
    for (int i = 3; i < 6 && !rc; i++) rc = shaped(&b[i], n_q, n_blocks, 8, "a block sum");
    if (!rc) rc = shaped(&b[2], n_q, 1, 8, "w_lo");
    if (!rc) rc = shaped(&b[6], D.n_t, D.n_z, 8, "tables");
    if (!rc) rc = shaped(&b[7], n_q, 1, 8, "group_table");
    if (!rc) rc = shaped(&b[9], n, 1, 8, "out");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[7].buf, n_q, (int64_t)D.n_t, "group table");
    u128 *w = NULL;
    if (!rc && !(w = malloc((n_q + 1) * sizeof *w))) rc = (PyErr_NoMemory(), -1);
    for (size_t i = 0; !rc && i < n_q; i++) {
        w[i] = (u128)((uint64_t *)b[1].buf)[i] << 64 | ((uint64_t *)b[2].buf)[i];
        if (!w[i]) rc = (PyErr_SetString(PyExc_ValueError, "paired: a group of weight 0"), -1);
    }
    const int64_t *d[3] = {b[3].buf, b[4].buf, b[5].buf};
    if (!rc) rc = draw_z1(bits, &D, b[0].buf, n, w, d, k, (size_t)width, b[6].buf, b[7].buf, b[8].buf, b[9].buf);
    free(w);
    release(b, 10);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *p_z2(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[9]; /* q, z1, y, v, accept_ptr, accept_idx, group_sig, out, accept_w */
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*y*y*w*", &bits, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[8], &b[6],
                          &b[7]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = (size_t)b[6].len / 8;
    Dims D = {n_q, n_q ? (size_t)b[2].len / 8 / n_q : 0, 0};
    Accepted A = {b[4].buf, b[5].buf, b[8].buf, b[4].len >= 8 ? (size_t)b[4].len / 8 - 1 : 0, (size_t)b[5].len / 8};
    size_t n_sig = D.n_z ? A.rows / D.n_z : 0;
    int rc = !D.n_z || A.rows != n_sig * D.n_z || b[8].len != b[5].len
                 ? (PyErr_SetString(PyExc_ValueError, "paired: bad z2 shape"), -1)
                 : 0;
    if (!rc) rc = shaped(&b[1], n, 1, 8, "z1");
    if (!rc) rc = shaped(&b[3], n_q, D.n_z, 8, "v");
    if (!rc) rc = shaped(&b[7], n, 1, 8, "out");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)D.n_z, "z1");
    if (!rc) rc = in_range(b[6].buf, n_q, (int64_t)n_sig, "signature");
    if (!rc) rc = draw_z2(bits, &D, b[0].buf, b[1].buf, n, b[2].buf, b[3].buf, &A, b[6].buf, b[7].buf);
    release(b, 9);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *p_cell(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[8]; /* q, z2, v, group_start, cell_order, tables, cell_table, out */
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*y*w*", &bits, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = b[3].len >= 8 ? (size_t)b[3].len / 8 - 1 : 0, n_cells = (size_t)b[4].len / 8;
    Dims D = {n_q, n_q ? (size_t)b[2].len / 8 / n_q : 0, 0};
    int rc = !D.n_z ? (PyErr_SetString(PyExc_ValueError, "paired: bad cell shape"), -1) : 0;
    if (!rc) D.n_t = (size_t)b[5].len / 8 / D.n_z;
    if (!rc) rc = shaped(&b[1], n, 1, 8, "z2");
    if (!rc) rc = shaped(&b[2], n_q, D.n_z, 8, "v");
    if (!rc) rc = shaped(&b[5], D.n_t, D.n_z, 8, "tables");
    if (!rc) rc = shaped(&b[6], n_cells, 1, 8, "cell_table");
    if (!rc) rc = shaped(&b[7], n, 1, 8, "out");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)D.n_z, "z2");
    if (!rc) rc = in_range(b[3].buf, n_q + 1, (int64_t)n_cells + 1, "group start");
    if (!rc) rc = in_range(b[4].buf, n_cells, (int64_t)n_cells, "cell");
    if (!rc) rc = in_range(b[6].buf, n_cells, (int64_t)D.n_t, "cell table");
    const int64_t *start = b[3].buf;
    for (size_t i = 0; !rc && i < n_q; i++)
        if (start[i] > start[i + 1]) rc = (PyErr_SetString(PyExc_ValueError, "paired: group starts decrease"), -1);
    if (!rc) rc = draw_cell(bits, &D, b[0].buf, b[1].buf, n, b[2].buf, start, b[4].buf, b[5].buf, b[6].buf, b[7].buf);
    release(b, 8);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *p_split(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[12]; /* ca, cb, z, support, support_packed, z_packed, z_flat, g, va, vb, total, pos */
    long long guard;
    Py_ssize_t n_used;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*y*Ly*y*ny*w*w*", &bits, &b[0], &b[1], &b[2], &b[10], &b[3], &b[4], &b[5],
                          &guard, &b[6], &b[7], &n_used, &b[11], &b[8], &b[9]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_z = (size_t)b[5].len / 8, zsize = (size_t)b[11].len / 8;
    size_t n_cols = n_used > 0 ? (size_t)b[7].len / 8 / (size_t)n_used : 0;
    Splits S = {b[3].buf, b[4].buf, b[5].buf, b[6].buf, b[7].buf, b[11].buf, n_cols ? (size_t)b[3].len / 8 / n_cols : 0,
                zsize, (size_t)n_used, guard};
    int rc = !n_cols || !S.width ? (PyErr_SetString(PyExc_ValueError, "paired: bad split shape"), -1) : 0;
    if (!rc) rc = shaped(&b[3], n_cols, S.width, 8, "support");
    if (!rc) rc = shaped(&b[4], n_cols, S.width, 8, "support_packed");
    if (!rc) rc = shaped(&b[6], n_z, 1, 8, "z_flat");
    if (!rc) rc = shaped(&b[7], n_cols, S.n_used, 8, "g");
    for (int i = 1; i < 3 && !rc; i++) rc = shaped(&b[i], n, 1, 8, "a split argument");
    if (!rc) rc = shaped(&b[10], n, 1, 8, "total");
    for (int i = 8; i < 10 && !rc; i++) rc = shaped(&b[i], n, 1, 8, "a split output");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_cols, "column");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)n_cols, "column");
    if (!rc) rc = in_range(b[2].buf, n, (int64_t)n_z, "pair vector");
    if (!rc) rc = draw_split(bits, &S, b[0].buf, b[1].buf, b[2].buf, b[10].buf, n, b[8].buf, b[9].buf);
    release(b, 12);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"z1", p_z1, METH_VARARGS, "z1(bits, q, w_hi u8, w_lo u8, d0, d1, d2, k, width, tables, group_table, y, out)."},
    {"z2", p_z2, METH_VARARGS, "z2(bits, q, z1, y, v, accept_ptr, accept_idx, accept_w, group_sig, out)."},
    {"cell", p_cell, METH_VARARGS, "cell(bits, q, z2, v, group_start, cell_order, tables, cell_table, out)."},
    {"split", p_split, METH_VARARGS, "split(bits, ca, cb, z, total, support, support_packed, z_packed, guard, z_flat, g, n_used, pos, va, vb)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_paired", "truedeal compiled paired-listing draws", -1, methods};

PyMODINIT_FUNC PyInit__paired(void) { return PyModule_Create(&moddef); }
