/* truedeal._paired: the draws of truedeal.paired_sampling (a listing
 * aggregated by spades+hearts pair) in C.
 *
 * Each function makes the same draws from the same bytes, in the same order,
 * as the numpy step it replaces (tests/test_paired.py checks whole deals byte
 * for byte).  Weights that pass int64 (a group's W and the products
 * T1[z1] * Y[z1]) are below the number of deals, 2**96, so they are exact in
 * unsigned __int128.
 *
 * Each step draws every deal's r first, then looks, deal by deal, for the
 * first index whose running sum of weights exceeds r.  Any search that finds
 * that index makes the same draw, so the searches skip ahead where they can:
 * z1 starts from a guide slot (the answer for a round r just below it); z2
 * reads the accepted row as runs of consecutive z2; the cell of a heavy
 * group skips whole blocks of cells by their sums; split scans a list of the
 * splits that can weigh anything instead of a column's whole support.  The
 * guides, block sums and lists are caches the sampler owns (zeroed numpy
 * arrays, filled in here the first time an entry is needed, for that
 * sampler's tables only; their sizes and bounds are in paired_sampling.py).
 * The tables behind these steps are far larger than the CPU caches and each
 * deal reads a few lines at random in them, so every loop also prefetches
 * what the deals AHEAD and 2 * AHEAD rows on will read, and z1, z2 and the
 * cell visit the deals group by group (by_group), so that a group's lines
 * are read for all its deals while they are in the caches.
 *
 *   z1(bits, q, w_hi u8, w_lo u8, tables, group_table, y, y_of, n_z, guide u8, out)
 *                                          PairedSampler._z1
 *   z2(bits, q, z1, y, y_of, n_z, v, v_of, accept_ptr, accept_idx, accept_w, group_sig, run_ptr, runs u8, out)
 *                                          PairedSampler._z2
 *   cell(bits, q, z2, v, v_of, n_z, group_start, cell_order, run_table i4, tables, cell_at, cell_sums, out)
 *                                          PairedSampler._cell
 *   split(bits, ca, cb, z, total, (support, support_packed, z_packed, guard, z_flat, g, n_used, pos, used,
 *         split_at u8, split_list u8), va, vb)
 *                                          PairedSampler._split
 *   splits(bits, q, cell, z1, z2, group_table, cell_table, cell_cols, tables, (split arrays), places)
 *                                          PairedSampler._split twice, each suit's place in g
 *   pool_pick(bits, sig, h, x, (sig_ptr, sig_box, lim, box_table, start_at, cum_at, start, cum, combo, q_dims, n_h),
 *             counts (classes, n, seats))  RankPool.deal's box and combo
 *
 * All arrays are C-contiguous int64 unless said otherwise; indices are
 * checked (the large index tables as they are read), so a malformed call
 * raises instead of reading out of bounds.  The pair tables (`tables`) are
 * int64 or uint32 (paired.py keeps them so when every entry fits), as
 * their buffer's format says.
 */
#include "_draws.h"

typedef unsigned __int128 u128;

/* Deals ahead whose second-level lines are prefetched (their first-level
 * lines: twice as far ahead). */
#define AHEAD 8
/* Of a run scanned in order, the entries prefetched ahead of the scan: about
 * what a scan reads on the bench specs (more costs bandwidth for lines the
 * scan stops before). */
#define PREFETCH_RUN 16

static inline void pf(const void *p) { __builtin_prefetch(p, 0, 3); }

/* ------------------------------------------------------------ pair tables */

/* The pair tables hold entries of `item` bytes: int64 (8), or uint32 (4)
 * when every entry fits, which halves the largest table of a listing.  The
 * functions that read them take `item` as an argument and are always
 * inlined; BY_ITEM calls one with the constant 4 or 8, so each size gets
 * its own copy of the loops, with no branch per entry. */
#define INLINE static inline __attribute__((always_inline))

/* f(..., item) with item a constant: one branch per call, not per entry. */
#define BY_ITEM(item, f, ...) ((item) == 4 ? f(__VA_ARGS__, 4) : f(__VA_ARGS__, 8))

/* Entry i of tables of `item`-byte entries. */
INLINE int64_t entry(const void *tables, size_t i, size_t item) {
    return item == 4 ? (int64_t)((const uint32_t *)tables)[i] : ((const int64_t *)tables)[i];
}

/* The address of entry i (a row's start, or a line to prefetch). */
INLINE const void *entry_at(const void *tables, size_t i, size_t item) { return (const char *)tables + i * item; }

static inline int bitlen128(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/* ------------------------------------------------------------ big draws */

/* Rng.below_int for each row's bound: k = bit length of bound - 1, then
 * ceil(k / 8) bytes big-endian, shifted down to k bits, until one is below
 * the bound.  Rows read one after another, so the bytes are read in bulk:
 * at each refill exactly what the rows left would take with no rejection,
 * which is never more than they do take. */
static int below_int128(PyObject *bits, const u128 *bound, size_t n, u128 *out) {
    size_t need = 0;
    int *kb = grab(S_P_DRAW, (n + 1) * sizeof *kb); /* each row's k */
    if (!kb) goto nomem;
    for (size_t r = 0; r < n; r++) {
        kb[r] = bitlen128(bound[r] - 1);
        need += (size_t)(kb[r] + 7) / 8;
    }
    uint8_t *buf = grab(S_P_BUF, need + 1);
    if (!buf) goto nomem;
    size_t have = 0, at = 0;
    for (size_t r = 0; r < n; r++) {
        int k = kb[r], nb = (k + 7) / 8;
        for (;;) {
            if (at + (size_t)nb > have) { /* rejections used up the bytes: keep the rest, read what is left */
                memmove(buf, buf + at, have - at);
                have -= at;
                at = 0;
                if (read_bits(bits, need - have, buf + have) < 0) {
                    drop(S_P_BUF, buf);
                    drop(S_P_DRAW, kb);
                    return -1;
                }
                have = need;
            }
            u128 x = 0;
            for (int i = 0; i < nb; i++) x = x << 8 | buf[at + i];
            at += (size_t)nb;
            x >>= 8 * nb - k;
            if (x < bound[r]) {
                out[r] = x;
                break;
            }
        }
        need -= (size_t)nb;
    }
    drop(S_P_BUF, buf);
    drop(S_P_DRAW, kb);
    return 0;
nomem:
    drop(S_P_DRAW, kb);
    PyErr_NoMemory();
    return -1;
}

/* ------------------------------------------------------------ the steps */

static int words128(PyObject *bits, const void *bound, void *r, size_t n) { return below_int128(bits, bound, n, r); }

/* y_of[q], v_of[q]: group q's row of Y and of V (groups with the same
 * cells' D+C tables share V, and with the same signature Y too). */
typedef struct {
    size_t n_q, n_z, n_t;
    const int64_t *y_of, *v_of;
} Dims;

/* The rows in the order the scans visit them: by group, each group's rows in
 * row order (a counting sort), or NULL for row order.  Each deal's r is drawn
 * first, in row order, and its scan reads nothing another deal writes but a
 * cache, so the order changes no draw; it changes what stays in the caches:
 * a group's Y_q, V_q and cells are read for all its deals together.  Row
 * order when the groups outnumber the rows (the counts would cost more than
 * they save).  Give it back with drop(S_P_ORDER, order). */
static uint32_t *by_group(const int64_t *q, size_t n, size_t n_q) {
    if (n < 2 * AHEAD || n_q > 4 * n || n > UINT32_MAX) return NULL;
    uint32_t *order = grab(S_P_ORDER, n * sizeof *order);
    size_t *count = grab(S_P_COUNT, (n_q + 1) * sizeof *count);
    if (!order || !count) { /* row order: the same draws */
        drop(S_P_ORDER, order);
        drop(S_P_COUNT, count);
        return NULL;
    }
    memset(count, 0, (n_q + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++) count[q[i] + 1]++; /* q is in range: checked by the caller */
    for (size_t g = 1; g <= n_q; g++) count[g] += count[g - 1];
    for (size_t i = 0; i < n; i++) order[count[q[i]]++] = (uint32_t)i;
    drop(S_P_COUNT, count);
    return order;
}

/* A scan's row arrays in group order: k arrays of n words (8 or 16 bytes:
 * `wide` says which), gathered into one scratch block, then room for the
 * scan's n outputs.  The scan then reads them in sequence, where indexing
 * them through the order would be a random read per array per deal (the
 * gather's reads are independent, so they overlap).  Wide arrays come
 * first, so that they are 16-byte aligned.  NULL: scan in row order.  Give
 * it back with drop(S_P_GROUPED, block). */
static void *grouped(const uint32_t *order, size_t n, size_t k, const void *const *src, const int *wide, void **dst) {
    size_t bytes = 8 * n;
    for (size_t a = 0; a < k; a++) bytes += (wide[a] ? 16 : 8) * n;
    char *block = order ? grab(S_P_GROUPED, bytes) : NULL, *at = block;
    for (size_t a = 0; block && a < k; a++) {
        if (wide[a])
            for (size_t j = 0; j < n; j++) ((u128 *)at)[j] = ((const u128 *)src[a])[order[j]];
        else
            for (size_t j = 0; j < n; j++) ((int64_t *)at)[j] = ((const int64_t *)src[a])[order[j]];
        dst[a] = at;
        at += (wide[a] ? 16 : 8) * n;
    }
    dst[k] = at; /* the outputs */
    return block;
}

/* A grouped scan's outputs back to row order. */
static void ungrouped(const uint32_t *order, size_t n, const int64_t *got, int64_t *out) {
    for (size_t j = 0; j < n; j++) out[order[j]] = got[j];
}

/* z1's guide, per group q (a row of 2 + 2m words, m = 2**m_log slots): word 0
 * says the row is built; slot s (words 2 + 2s, 2 + 2s + 1) holds, for
 * r0 = s << shift, the first z whose running sum of T1[z] * Y_q[z] exceeds
 * r0 and the running sum before that z (low 64 bits, then the high 32 bits
 * with z in the top 32), where shift makes (W_q - 1) >> shift < m.  A draw
 * r >= r0 has its z at or after slot r >> shift's, so its scan starts there
 * and reads about n_z / m products, not n_z / 2.  An unbuilt row is zeros,
 * which read as "start at z = 0 with nothing summed": right, only slow (the
 * prefetch reads it so). */
static inline int guide_shift(u128 w, int m_log) {
    int shift = bitlen128(w - 1) - m_log;
    return shift > 0 ? shift : 0;
}

INLINE int build_guide(size_t n_z, const void *t1, const int64_t *yq, u128 w, int m_log, uint64_t *row, size_t item) {
    int shift = guide_shift(w, m_log);
    size_t slots = (size_t)((w - 1) >> shift) + 1, s = 0;
    uint64_t *slot = row + 2;
    u128 cum = 0;
    for (size_t z = 0; z < n_z; z++) {
        int64_t t = entry(t1, z, item);
        if (t < 0 || yq[z] < 0) goto bad;
        u128 next = cum + (u128)t * (u128)yq[z]; /* < 2**96 + 2**126: no wrap */
        if (next >> 96) goto bad;
        for (; s < slots && next > (u128)s << shift; s++) {
            slot[2 * s] = (uint64_t)cum;
            slot[2 * s + 1] = (uint64_t)(cum >> 64) | (uint64_t)z << 32;
        }
        cum = next;
    }
    if (cum != w) goto bad; /* then every slot is set, and every scan ends before n_z */
    row[0] = 1;
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "paired: a group's weight is not the sum of its z1 weights");
    return -1;
}

/* What z1's scan reads: T1 by group_table (tables of `item`-byte entries),
 * Y, and the guide of 2**m_log slots. */
typedef struct {
    const void *tables;
    const int64_t *group_table, *y;
    uint64_t *guide;
    int m_log;
    size_t item;
} Guided;

/* z1's scan of rows [0, n), their bounds W_q, r and guide slots drawn;
 * `item` is G->item (BY_ITEM makes it a constant). */
INLINE int scan_z1(const Dims *D, const Guided *G, const int64_t *q, const u128 *bound, const u128 *r, const uint64_t *slot,
                   size_t n, int64_t *out, size_t item) {
    size_t rw = 2 + ((size_t)2 << G->m_log);
    const void *tables = G->tables;
    const int64_t *group_table = G->group_table, *y = G->y;
    uint64_t *guide = G->guide;
    for (size_t i = 0; i < n; i++) {
        if (i + 2 * AHEAD < n) { /* the guide row's flag and the slot */
            const uint64_t *row = guide + (size_t)q[i + 2 * AHEAD] * rw;
            pf(row);
            pf(row + 2 + 2 * slot[i + 2 * AHEAD]);
        }
        if (i + AHEAD < n) { /* where its scan starts in T1 and Y_q */
            size_t k = i + AHEAD, z = guide[(size_t)q[k] * rw + 3 + 2 * slot[k]] >> 32;
            if (z < D->n_z) {
                pf(entry_at(tables, (size_t)group_table[q[k]] * D->n_z + z, item));
                pf(y + (size_t)D->y_of[q[k]] * D->n_z + z);
            }
        }
        uint64_t *row = guide + (size_t)q[i] * rw;
        const void *t1 = entry_at(tables, (size_t)group_table[q[i]] * D->n_z, item);
        const int64_t *yq = y + (size_t)D->y_of[q[i]] * D->n_z;
        if (!row[0] && build_guide(D->n_z, t1, yq, bound[i], G->m_log, row, item) < 0) return -1;
        const uint64_t *s = row + 2 + 2 * slot[i];
        u128 cum = (u128)(uint32_t)s[1] << 64 | s[0];
        size_t z = s[1] >> 32;
        for (; z < D->n_z; z++) {
            cum += (u128)entry(t1, z, item) * (u128)yq[z];
            if (cum > r[i]) break;
        }
        if (z == D->n_z) { /* not reached: a built row sums to W_q > r */
            PyErr_SetString(PyExc_ValueError, "paired: a group's weight is not the sum of its z1 weights");
            return -1;
        }
        out[i] = (int64_t)z;
    }
    return 0;
}

/* z1: r below W_q, then the first z1 whose running sum of T1[z1] * Y_q[z1]
 * exceeds r, scanned from r's guide slot. */
static int draw_z1(PyObject *bits, const Dims *D, const int64_t *q, size_t n, const uint64_t *w_hi, const uint64_t *w_lo,
                   const Guided *G, int64_t *out) {
    const int64_t *group_table = G->group_table;
    u128 *bound = grab(S_P_BND, (n + 1) * sizeof *bound), *r = grab(S_P_R, (n + 1) * sizeof *r);
    uint64_t *slot = grab(S_P_AUX, (n + 1) * sizeof *slot); /* each deal's guide slot */
    uint32_t *order = NULL;
    void *block = NULL;
    int rc = -1;
    if (!bound || !r || !slot) {
        PyErr_NoMemory();
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        bound[i] = (u128)w_hi[q[i]] << 64 | w_lo[q[i]];
        if (!bound[i]) {
            PyErr_SetString(PyExc_ValueError, "paired: a group of weight 0");
            goto out;
        }
        int64_t t = group_table[q[i]];
        if (t < 0 || (size_t)t >= D->n_t) {
            PyErr_SetString(PyExc_IndexError, "paired: group table out of range");
            goto out;
        }
    }
    if (by_parts(words128, sizeof *r, bits, bound, r, n) < 0) goto out;
    for (size_t i = 0; i < n; i++) slot[i] = (uint64_t)(r[i] >> guide_shift(bound[i], G->m_log));
    order = by_group(q, n, D->n_q);
    void *g[5];
    block = grouped(order, n, 4, (const void *[]){bound, r, q, slot}, (const int[]){1, 1, 0, 0}, g);
    if (!block) g[0] = bound, g[1] = r, g[2] = (void *)q, g[3] = slot, g[4] = out; /* row order */
    if (BY_ITEM(G->item, scan_z1, D, G, g[2], g[0], g[1], g[3], n, g[4])) goto out;
    if (block) ungrouped(order, n, g[4], out);
    rc = 0;
out:
    drop(S_P_GROUPED, block);
    drop(S_P_ORDER, order);
    drop(S_P_BND, bound);
    drop(S_P_R, r);
    drop(S_P_AUX, slot);
    return rc;
}

/* r[i] below table[rows[i] * stride + cols[i]] for each i (one Rng.below
 * call): the draws of z2 and of the cell.  Returns r (give it back with
 * drop(S_P_DRAW, r)), or NULL with an exception set. */
static int64_t *below_entries(PyObject *bits, const int64_t *table, const int64_t *row_of, const int64_t *rows,
                              const int64_t *cols, size_t stride, size_t n) {
    int64_t *bound = grab(S_P_BND, (n + 1) * 8), *r = grab(S_P_DRAW, (n + 1) * 8);
    if (!bound || !r) {
        PyErr_NoMemory();
    } else {
        for (size_t i = 0; i < n; i++) bound[i] = table[(size_t)row_of[rows[i]] * stride + (size_t)cols[i]];
        if (by_parts(words64, sizeof *r, bits, bound, r, n) == 0) {
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
 * alone; the weights are 1, or a rank pool's ways).
 *
 * The accepted z2 of a row come in runs of consecutive vectors (3 to 11 long
 * on the bench specs).  When every weight is 1 the sampler also passes the
 * rows as runs, z0 | length << 32 in runs[rptr[k] .. rptr[k + 1]): a scan then
 * reads one word per run instead of two per entry, and V_q's entries of a
 * run side by side; with no runs (empty arrays) it reads the entries.  (The
 * runs ignore w: passing them is the caller's word that w is all 1s, which
 * a check here would pay for with a read of all of w at every call.) */
typedef struct {
    const int64_t *ptr, *idx, *w, *rptr;
    const uint64_t *runs;
    size_t rows, nnz, n_sig, n_runs;
    const uint64_t *prefix; /* with runs: each row of V's running sums from 0, n_z + 1 a row (mod 2**64), or NULL */
} Accepted;

/* The compressed row of (q's signature, z1), or 0 (and from = to) when the
 * signature or the row's bounds are out of range.  In runs when there are. */
static inline int accepted_row(const Accepted *A, const Dims *D, const int64_t *sig, int64_t q, int64_t z1, int64_t *from,
                               int64_t *to) {
    int64_t s = sig[q];
    *from = *to = 0;
    if (s < 0 || (size_t)s >= A->n_sig) return 0;
    size_t row = (size_t)s * D->n_z + (size_t)z1;
    const int64_t *p = A->runs ? A->rptr : A->ptr;
    *from = p[row];
    *to = p[row + 1];
    if (*from < 0 || *to < *from || (size_t)*to > (A->runs ? A->n_runs : A->nnz)) return (*from = *to = 0), 0;
    return 1;
}

/* Prefetch the lines of V_q that the scan of an accepted row [from, to)
 * reads first: every line of its first PREFETCH_RUN runs (a run spans one
 * or two lines), or of its first PREFETCH_RUN entries. */
static inline void prefetch_v(const Accepted *A, const Dims *D, const int64_t *vq, int64_t from, int64_t to) {
    uintptr_t last = 0;
    int64_t end = to - from > PREFETCH_RUN ? from + PREFETCH_RUN : to;
    for (int64_t j = from; j < end; j++) {
        uint64_t z = A->runs ? (uint32_t)A->runs[j] : (uint64_t)A->idx[j], top = A->runs ? z + (A->runs[j] >> 32) : z + 1;
        if (top > D->n_z || top <= z) break;
        uintptr_t line = (uintptr_t)(vq + z) >> 6, stop = (uintptr_t)(vq + top - 1) >> 6;
        for (line = line > last ? line : last + 1; line <= stop; line++) /* ascending: a line once */
            pf((const void *)(line << 6)), last = line;
    }
}

/* The first z2 of the runs [from, to) where the running sum of V_q first
 * exceeds r, from V_q's running sums pq (mod 2**64: a difference of two is
 * exact, every sum of accepted weights being below Y < 2**63): a run whose
 * sum keeps it at or below r is passed whole, and the one that does not is
 * halved (the sums grow along it, V being >= 0).  -1 when none does. */
static int64_t run_sums_past(const Accepted *A, const Dims *D, const uint64_t *pq, int64_t from, int64_t to, int64_t r,
                             const char **bad) {
    uint64_t sum = 0;
    for (int64_t j = from; j < to; j++) {
        uint64_t z = (uint32_t)A->runs[j], end = z + (A->runs[j] >> 32);
        if (end > D->n_z) {
            *bad = "paired: accepted z2 out of range";
            return -1;
        }
        uint64_t left = (uint64_t)r - sum, base = pq[z]; /* r >= sum here */
        if (pq[end] - base <= left) {
            sum += pq[end] - base;
            continue;
        }
        for (uint64_t len = end - z, half; len > 1; len -= half) { /* the first z' with pq[z' + 1] - base > left */
            half = len / 2;
            z = pq[z + half + 1] - base <= left ? z + half : z;
        }
        return (int64_t)(z + (pq[z + 1] - base <= left));
    }
    return -1;
}

/* z2: r below Y_q[z1], then the first z2 whose running sum of
 * V_q[z2] * accept[sig_q][z1][z2] (below Y, so within int64) exceeds r: the same z2 as a scan of every
 * z2, since the sum grows only at accepted ones.  The row is prefetched
 * 2 * AHEAD deals ahead, the V_q its scan starts on AHEAD ahead. */
static const char *scan_z2(const Dims *D, const int64_t *q, const int64_t *z1, const int64_t *r, size_t n,
                           const int64_t *v, const Accepted *A, const int64_t *sig, int64_t *out) {
    const char *bad = NULL;
    for (size_t i = 0; i < n && !bad; i++) {
        int64_t from, to;
        if (i + 2 * AHEAD < n && accepted_row(A, D, sig, q[i + 2 * AHEAD], z1[i + 2 * AHEAD], &from, &to) && from < to) {
            int64_t end = to - from > PREFETCH_RUN ? from + PREFETCH_RUN : to; /* the entries the next step reads */
            for (int64_t j = from; j < end; j += 8)
                if (A->runs) pf(A->runs + j);
                else pf(A->idx + j), pf(A->w + j);
        }
        if (i + AHEAD < n && accepted_row(A, D, sig, q[i + AHEAD], z1[i + AHEAD], &from, &to))
            prefetch_v(A, D, v + (size_t)D->v_of[q[i + AHEAD]] * D->n_z, from, to);
        if (sig[q[i]] < 0 || (size_t)sig[q[i]] >= A->n_sig) {
            bad = "paired: signature out of range";
            break;
        }
        if (!accepted_row(A, D, sig, q[i], z1[i], &from, &to)) {
            bad = "paired: accepted z2 out of range";
            break;
        }
        const int64_t *vq = v + (size_t)D->v_of[q[i]] * D->n_z;
        int64_t sum = 0, j = from, found = -1;
        if (A->runs && A->prefix) {
            found = run_sums_past(A, D, A->prefix + (size_t)D->v_of[q[i]] * (D->n_z + 1), from, to, r[i], &bad);
        } else if (A->runs) {
            for (; j < to && found < 0; j++) {
                uint64_t z = (uint32_t)A->runs[j], end = z + (A->runs[j] >> 32);
                if (end > D->n_z) {
                    bad = "paired: accepted z2 out of range";
                    break;
                }
                for (; z < end; z++)
                    if ((sum += vq[z]) > r[i]) {
                        found = (int64_t)z;
                        break;
                    }
            }
        } else {
            for (; j < to; j++) {
                int64_t z = A->idx[j];
                if (z < 0 || (size_t)z >= D->n_z) {
                    bad = "paired: accepted z2 out of range";
                    break;
                }
                sum += vq[z] * A->w[j];
                if (sum > r[i]) {
                    found = z;
                    break;
                }
            }
        }
        out[i] = found >= 0 ? found : (int64_t)D->n_z; /* n_z: not reached for r below Y_q[z1] */
    }
    return bad;
}

static int draw_z2(PyObject *bits, const Dims *D, const int64_t *q, const int64_t *z1, size_t n, const int64_t *y,
                   const int64_t *v, const Accepted *A, const int64_t *sig, int64_t *out) {
    int64_t *r = below_entries(bits, y, D->y_of, q, z1, D->n_z, n);
    if (!r) return -1;
    uint32_t *order = by_group(q, n, D->n_q);
    void *g[4];
    void *block = grouped(order, n, 3, (const void *[]){q, z1, r}, (const int[]){0, 0, 0}, g);
    const char *bad = block ? scan_z2(D, g[0], g[1], g[2], n, v, A, sig, g[3]) : scan_z2(D, q, z1, r, n, v, A, sig, out);
    if (block && !bad) ungrouped(order, n, g[3], out);
    drop(S_P_GROUPED, block);
    drop(S_P_ORDER, order);
    drop(S_P_DRAW, r);
    if (bad) PyErr_SetString(PyExc_IndexError, bad);
    return bad ? -1 : 0;
}

/* The cell: r below V_q[z2], then the first cell of the group's run whose
 * running sum of T2[its D+C table][z2] exceeds r.  run_table is
 * cell_table[cell_order] (int32): a run's tables side by side.
 *
 * Each deal reads one line of T2 per cell it passes (a few dozen: the
 * heavy groups have long runs), so the heaviest groups (the sampler picks
 * them by weight, within a bound) keep block sums: group q's segment of
 * `sums`, at word at[q] (-1: none), is a flag word (0 unbuilt, 1 built, 2
 * not kept: a negative weight would make the running sum go down), then
 * for each z2 the running sums of its run's cells at the end of each block
 * of CELL_BLOCK cells.  A draw then halves a line of them and reads the
 * cells of one block (CELL_BLOCK: a constant, so that finding a block's
 * cells is a shift). */
#define CELL_BLOCK 8 /* exported as CELL_BLOCK: the sampler sizes the segments with it */

typedef struct {
    const int64_t *start, *order, *at;
    const void *tables; /* of `item`-byte entries */
    const int32_t *run; /* run_table */
    int64_t *sums;
    size_t n_cells, n_sums, item;
} Cells;

/* Whether group q keeps block sums, in a segment that fits in `sums`. */
static inline int has_sums(const Cells *C, const Dims *D, int64_t q, size_t size) {
    int64_t off = C->at[q];
    return off >= 0 && (size_t)off < C->n_sums && C->n_sums - (size_t)off >= 1 + (size + CELL_BLOCK - 1) / CELL_BLOCK * D->n_z;
}

/* Group q's block sums (built on first use), or NULL to scan its run. */
INLINE const int64_t *cell_sums(const Cells *C, const Dims *D, int64_t q, size_t a, size_t size, const char **bad, size_t item) {
    int64_t off = C->at[q];
    size_t nb = (size + CELL_BLOCK - 1) / CELL_BLOCK;
    if (off < 0) return NULL;
    if (!has_sums(C, D, q, size)) {
        *bad = "paired: cell sums out of range";
        return NULL;
    }
    int64_t *seg = C->sums + off;
    if (seg[0] == 0) {
        memset(seg + 1, 0, nb * D->n_z * sizeof *seg);
        seg[0] = 1;
        for (size_t j = 0; j < size && seg[0] == 1; j++) {
            int32_t t = C->run[a + j];
            if (t < 0 || (size_t)t >= D->n_t) {
                *bad = "paired: cell table out of range";
                seg[0] = 0;
                return NULL;
            }
            const void *row = entry_at(C->tables, (size_t)t * D->n_z, item);
            int64_t *out = seg + 1 + j / CELL_BLOCK;
            for (size_t z = 0; z < D->n_z; z++) {
                int64_t e = entry(row, z, item);
                if (e < 0) seg[0] = 2;
                out[z * nb] += e;
            }
        }
        for (size_t z = 0; z < D->n_z && seg[0] == 1; z++) /* each z2's block sums as running sums */
            for (size_t blk = 1; blk < nb; blk++) seg[1 + z * nb + blk] += seg[1 + z * nb + blk - 1];
    }
    return seg[0] == 1 ? seg + 1 : NULL;
}

/* The cells of rows [0, n); `item` is C->item (BY_ITEM makes it a constant). */
INLINE const char *scan_cell(const Dims *D, const int64_t *q, const int64_t *z2, const int64_t *r, size_t n, const Cells *C,
                             int64_t *out, size_t item) {
    const char *bad = NULL;
    for (size_t i = 0; i < n && !bad; i++) {
        if (i + 2 * AHEAD < n) { /* the run, or the line of block sums */
            size_t k = i + 2 * AHEAD;
            int64_t a = C->start[q[k]], b = C->start[q[k] + 1];
            if (a >= 0 && a <= b && has_sums(C, D, q[k], (size_t)(b - a)))
                pf(C->sums + C->at[q[k]] + 1 + (size_t)z2[k] * (((size_t)(b - a) + CELL_BLOCK - 1) / CELL_BLOCK));
            else if (a >= 0 && (size_t)a < C->n_cells)
                pf(C->run + a);
        }
        if (i + AHEAD < n) { /* the T2 lines its scan starts on */
            size_t k = i + AHEAD;
            int64_t a = C->start[q[k]], b = C->start[q[k] + 1];
            if (a >= 0 && a <= b && (size_t)b <= C->n_cells) {
                size_t size = (size_t)(b - a), from = 0, to = size < PREFETCH_RUN ? size : PREFETCH_RUN;
                size_t nb = (size + CELL_BLOCK - 1) / CELL_BLOCK;
                if (has_sums(C, D, q[k], size) && C->sums[C->at[q[k]]] == 1) { /* the block its r falls in */
                    size_t blk = upper(C->sums + C->at[q[k]] + 1 + (size_t)z2[k] * nb, nb, r[k]);
                    blk = blk < nb ? blk : nb - 1;
                    from = blk * CELL_BLOCK;
                    to = from + CELL_BLOCK < size ? from + CELL_BLOCK : size;
                }
                pf(C->order + a + from); /* where the cell's number is read (for a long run not kept, a guess) */
                for (size_t j = a + from; j < (size_t)a + to; j++)
                    if (C->run[j] >= 0 && (size_t)C->run[j] < D->n_t)
                        pf(entry_at(C->tables, (size_t)C->run[j] * D->n_z + (size_t)z2[k], item));
            }
        }
        int64_t a = C->start[q[i]], b = C->start[q[i] + 1];
        if (a < 0 || b < a || (size_t)b > C->n_cells) {
            bad = "paired: group start out of range";
            break;
        }
        size_t size = (size_t)(b - a), j = 0, end = size;
        const int32_t *run = C->run + a;
        int64_t sum = 0;
        const int64_t *sums = cell_sums(C, D, q[i], (size_t)a, size, &bad, item);
        if (bad) break;
        if (sums) { /* skip the blocks whose running sum stays at or below r */
            size_t nb = (size + CELL_BLOCK - 1) / CELL_BLOCK;
            const int64_t *cum = sums + (size_t)z2[i] * nb;
            size_t blk = upper(cum, nb, r[i]);
            sum = blk ? cum[blk - 1] : 0;
            if (blk == nb) j = size; /* not reached for r below V_q[z2] */
            else j = blk * CELL_BLOCK, end = j + CELL_BLOCK < size ? j + CELL_BLOCK : size;
        }
        for (; j < end; j++) {
            if (run[j] < 0 || (size_t)run[j] >= D->n_t) {
                bad = "paired: cell table out of range";
                break;
            }
            sum += entry(C->tables, (size_t)run[j] * D->n_z + (size_t)z2[i], item);
            if (sum > r[i]) break;
        }
        if (bad) break;
        if (!size) {
            bad = "paired: a group with no cells";
            break;
        }
        if (j >= end) j = 0; /* j == size is not reached for r below V_q[z2] */
        int64_t cell = C->order[a + (int64_t)j];
        if (cell < 0 || (size_t)cell >= C->n_cells) {
            bad = "paired: cell out of range";
            break;
        }
        out[i] = cell;
    }
    return bad;
}

static int draw_cell(PyObject *bits, const Dims *D, const int64_t *q, const int64_t *z2, size_t n, const int64_t *v,
                     const Cells *C, int64_t *out) {
    int64_t *r = below_entries(bits, v, D->v_of, q, z2, D->n_z, n);
    if (!r) return -1;
    uint32_t *order = by_group(q, n, D->n_q);
    void *g[4];
    void *block = grouped(order, n, 3, (const void *[]){q, z2, r}, (const int[]){0, 0, 0}, g);
    if (!block) g[0] = (void *)q, g[1] = (void *)z2, g[2] = r, g[3] = out; /* row order */
    const char *bad = BY_ITEM(C->item, scan_cell, D, g[0], g[1], g[2], n, C, g[3]);
    if (block && !bad) ungrouped(order, n, g[3], out);
    drop(S_P_GROUPED, block);
    drop(S_P_ORDER, order);
    drop(S_P_DRAW, r);
    if (bad) PyErr_SetString(PyExc_IndexError, bad);
    return bad ? -1 : 0;
}

/* The splits of (column, pair vector) that can weigh anything, listed the
 * first time a draw needs them: split_at[col * n_z + z] is 0, or
 * start << 20 | count << 1 | 1 for the entries [start, start + count) of
 * the 32-bit words after list[0] (which counts the entries used); an entry
 * packs the places of the two suits' vectors in g (16 bits each: used[] maps
 * a place back to its flat vector).  A column's support is some hundred
 * vectors, of which a pair vector admits one in ten or so, and each is
 * random reads in pos: the list turns a split into a scan of those few,
 * reading g (a few hundred kB) alone, a 64-byte line per 16 of them (the
 * lists outgrow the caches: a scan's lines are what it waits for).  A full
 * list (or more than 2**16 places) scans the support as before. */
typedef struct {
    const int64_t *support, *support_packed, *z_packed, *z_flat, *g, *pos, *used;
    size_t width, zsize, n_used, n_z; /* g is (n_cols, n_used); pos maps a flat vector to its column of g, or -1 */
    int64_t guard;
    uint64_t *at, *list; /* NULL: no list */
    size_t cap;          /* 32-bit entries the list can hold */
    size_t n_cols;
} Splits;

#define LIST_BUILT 1
#define LIST_PLACES (1 << 16) /* most places an entry packs */

static inline uint32_t *list_entries(const Splits *S) { return (uint32_t *)(S->list + 1); }

#define LIST_COUNT(w) ((size_t)((w) >> 1) & 0x7FFFF)
#define LIST_START(w) ((size_t)((w) >> 20))

/* g at (col, flat vector); 0 where no column reaches it.  A pos out of range
 * reads 0 too: the split's weights then miss their table, which is an error. */
static inline int64_t weight_at(const Splits *S, int64_t col, int64_t flat) {
    int64_t at = S->pos[flat];
    return at < 0 || (size_t)at >= S->n_used ? 0 : S->g[(size_t)col * S->n_used + (size_t)at];
}

/* Whether support entry j of column ca fits inside pair vector z; then *va,
 * *vb are the two suits' flat vectors (a rest with a negative coordinate
 * does not fit). */
static inline int split_fits(const Splits *S, int64_t ca, int64_t z, size_t j, int64_t *va, int64_t *vb) {
    *va = S->support[(size_t)ca * S->width + j];
    /* -1 pads a column's support; a value past zsize (never made) weighs 0 too, so a malformed call ends in
     * "not the sum of its splits" instead of reading out of bounds, without a scan of the table per call */
    if (*va < 0 || (size_t)*va >= S->zsize) return 0;
    if (((S->z_packed[z] - S->support_packed[(size_t)ca * S->width + j]) & S->guard) != S->guard) return 0;
    *vb = S->z_flat[z] - *va;
    return *vb >= 0 && (size_t)*vb < S->zsize;
}

/* List the splits of (ca, z) whose suits' vectors are both in g and whose
 * first weight is not 0 (the others weigh 0 with any cb); 0 when the list has
 * no room left for a whole support. */
static int list_splits(const Splits *S, int64_t ca, int64_t z) {
    size_t used = (size_t)S->list[0], c = 0, end = S->width, fit = 0;
    if (S->cap - used < S->width) return 0;
    uint32_t *e = list_entries(S) + used;
    const int64_t *sup = S->support + (size_t)ca * S->width;
    while (end && sup[end - 1] < 0) end--; /* the -1 padding at the end of a column's support */
    /* the support entries that fit inside z first, their pos entries prefetched (random reads in a table of
     * every flat vector), then those that are in g: the entries, kept in j order in the list's own room */
    for (size_t j = 0; j < end; j++) {
        int64_t va, vb;
        if (!split_fits(S, ca, z, j, &va, &vb)) continue;
        pf(S->pos + va);
        pf(S->pos + vb);
        e[fit++] = (uint32_t)j;
    }
    for (size_t k = 0; k < fit; k++) {
        size_t j = (size_t)e[k];
        int64_t va = sup[j], vb = S->z_flat[z] - va, pa = S->pos[va], pb = S->pos[vb];
        if (pa < 0 || (size_t)pa >= S->n_used || pb < 0 || (size_t)pb >= S->n_used) continue;
        if (!S->g[(size_t)ca * S->n_used + (size_t)pa]) continue;
        e[c++] = (uint32_t)pa | (uint32_t)pb << 16; /* c <= k: the pass reads ahead of its writes */
    }
    S->list[0] = used + c;
    S->at[(size_t)ca * S->n_z + (size_t)z] = (uint64_t)used << 20 | (uint64_t)c << 1 | LIST_BUILT;
    return 1;
}

/* Each pair vector z into its two suits' flat vectors: r below the pair's
 * table at z (total[i], the sum of its splits' weights; each chunk's rows
 * from its own bits when bits is a tuple of parts, see by_parts), then the first
 * split whose running sum exceeds r.  A table that is not that sum is an
 * error, not a wrong draw. */
static int draw_split(PyObject *bits, const Splits *S, const int64_t *ca, const int64_t *cb, const int64_t *z,
                      const int64_t *total, size_t n, int64_t *va, int64_t *vb, int64_t *places) {
    int64_t *r = grab(S_P_DRAW, (n + 1) * 8);
    int rc = -1;
    if (!r) {
        PyErr_NoMemory();
        goto out;
    }
    if (by_parts(words64, 8, bits, total, r, n) < 0) goto out;
    for (size_t i = 0; i < n; i++) {
        if (S->list && i + 2 * AHEAD < n) pf(S->at + (size_t)ca[i + 2 * AHEAD] * S->n_z + (size_t)z[i + 2 * AHEAD]);
        if (S->list && i + AHEAD < n) {
            uint64_t w = S->at[(size_t)ca[i + AHEAD] * S->n_z + (size_t)z[i + AHEAD]];
            if (w & LIST_BUILT) { /* the list's first lines (a scan reads 14 entries on average on four.json) */
                pf(list_entries(S) + LIST_START(w));
                if (LIST_COUNT(w) > 8) pf(list_entries(S) + LIST_START(w) + 16);
            }
        }
        uint64_t w = S->list ? S->at[(size_t)ca[i] * S->n_z + (size_t)z[i]] : 0;
        if (S->list && !(w & LIST_BUILT) && list_splits(S, ca[i], z[i]))
            w = S->at[(size_t)ca[i] * S->n_z + (size_t)z[i]];
        int64_t acc = 0, a = -1, b = -1, pa = -1, pb = -1;
        if (w & LIST_BUILT) { /* the list's entries, checked as read (the list is the caller's array) */
            if (LIST_START(w) + LIST_COUNT(w) > S->list[0]) {
                PyErr_SetString(PyExc_IndexError, "paired: split list out of range");
                goto out;
            }
            const uint32_t *e = list_entries(S) + LIST_START(w);
            const int64_t *ga = S->g + (size_t)ca[i] * S->n_used, *gb = S->g + (size_t)cb[i] * S->n_used;
            for (size_t k = 0, c = LIST_COUNT(w); k < c; k++) {
                size_t at_a = e[k] & 0xFFFF, at_b = e[k] >> 16;
                if (at_a >= S->n_used || at_b >= S->n_used) {
                    PyErr_SetString(PyExc_IndexError, "paired: split list out of range");
                    goto out;
                }
                acc += ga[at_a] * gb[at_b];
                if (acc > r[i]) {
                    a = S->used[at_a];
                    b = S->z_flat[z[i]] - a;
                    pa = (int64_t)at_a, pb = (int64_t)at_b;
                    break;
                }
            }
        } else {
            for (size_t j = 0; j < S->width; j++) {
                int64_t x, y;
                if (!split_fits(S, ca[i], z[i], j, &x, &y)) continue;
                acc += weight_at(S, ca[i], x) * weight_at(S, cb[i], y);
                if (acc > r[i]) { /* both weigh something: their places are in g */
                    a = x, b = y, pa = S->pos[x], pb = S->pos[y];
                    break;
                }
            }
        }
        if (a < 0) {
            PyErr_SetString(PyExc_ValueError, "paired: a pair table is not the sum of its splits");
            goto out;
        }
        if (va) va[i] = a, vb[i] = b;
        if (places) places[4 * i] = pa, places[4 * i + 1] = pb;
    }
    rc = 0;
out:
    drop(S_P_DRAW, r);
    return rc;
}

/* The rows of both splits of a deal: its group q and cell, and the tables
 * of its S+H pair (group_table[q]) and D+C pair (cell_table[cell]). */
typedef struct {
    const int64_t *q, *cell, *z1, *z2, *group_table, *cell_table, *cell_cols;
    const void *tables; /* of `item`-byte entries */
    size_t n_t, item;
} Pairs;

/* Split z1 (suits 0 and 1) then z2 (suits 2 and 3), as PairedSampler.draw
 * does, into the places in g of each suit's vector (places, (n, 4)).  The
 * totals are single reads in tables far larger than the caches: prefetched
 * AHEAD rows on.  `item` is P->item (BY_ITEM makes it a constant). */
INLINE int draw_pairs(PyObject *bits, const Splits *S, const Pairs *P, size_t n, int64_t *places, size_t item) {
    int64_t *col = grab(S_P_SPLIT, (3 * n + 1) * 8); /* ca, cb, total */
    if (!col) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t *cb = col + n, *total = cb + n;
    int rc = -1;
    for (int pair = 0; pair < 2; pair++) {
        const int64_t *z = pair ? P->z2 : P->z1, *rows = pair ? P->cell : P->q, *table = pair ? P->cell_table : P->group_table;
        for (size_t i = 0; i < n; i++) {
            if (i + AHEAD < n) {
                int64_t t = table[rows[i + AHEAD]];
                if (t >= 0 && (size_t)t < P->n_t) pf(entry_at(P->tables, (size_t)t * S->n_z + (size_t)z[i + AHEAD], item));
            }
            int64_t t = table[rows[i]], a = P->cell_cols[P->cell[i] * 4 + 2 * pair], b = P->cell_cols[P->cell[i] * 4 + 2 * pair + 1];
            if (t < 0 || (size_t)t >= P->n_t || a < 0 || (size_t)a >= S->n_cols || b < 0 || (size_t)b >= S->n_cols) {
                PyErr_SetString(PyExc_IndexError, "paired: a pair's table or column out of range");
                goto out;
            }
            col[i] = a, cb[i] = b;
            total[i] = entry(P->tables, (size_t)t * S->n_z + (size_t)z[i], item);
        }
        if (draw_split(bits, S, col, cb, z, total, n, NULL, NULL, places + 2 * pair) < 0) goto out;
    }
    rc = 0;
out:
    drop(S_P_SPLIT, col);
    return rc;
}

/* ------------------------------------------------------------ the rank pool */

/* RankPool.deal's box and combo (truedeal/listing/rank_pool.py): each row's
 * ways in each box of its cell signature, one Rng.below on their sums, then
 * the box and, in that box's table, the combo at the drawn way.  The numpy
 * code loops over signatures and boxes on arrays; here each row reads a few
 * entries of small tables, so one pass over the rows does it all.
 *
 * The tables are RankPool's PoolTables, concatenated once per pool: table t
 * holds start[start_at[t] ..] (n_h * n_q + 1 run starts, by (h, q)) and
 * cum[cum_at[t] .. cum_at[t + 1]) (its running ways, from 0), whose combos
 * are combo rows cum_at[t] - t .. .  A row's x holds its listed forms'
 * values then its mixed forms' patterned parts; a box's lim row holds the
 * lows of those columns, then the highs.  The counts come out class-major,
 * (classes, rows, seats): each class's counts are then one contiguous array,
 * what each of deal_classes_and_spots' deals reads (numpy copies and sums
 * rows of two or three counts slowly). */
typedef struct {
    const int64_t *sig_ptr, *sig_box, *lim, *box_table, *start_at, *cum_at, *start, *cum, *combo, *q_dims;
    size_t n_sig, n_box, n_tab, n_col, n_mixed, n_h, n_q, n_prefix, row, n_start, n_cum;
    size_t n_seat; /* a combo's row: classes * n_seat counts */
} Pool;

/* A fault found with the GIL released: raised once it is held again. */
typedef struct {
    PyObject *type;
    const char *msg;
} Fault;

static inline int fault(Fault *F, PyObject *type, const char *msg) {
    F->type = type;
    F->msg = msg;
    return -1;
}

/* Run k of box b for a row (PoolTable.runs, in its order: one run per value
 * of the mixed parts but the last, the last part's range within it) as
 * combos [*first, *end) of the box's table; empty where the box excludes
 * those parts.  x: the row's columns (the mixed parts are its last n_mixed).
 * -1 when the table's starts are not runs of it. */
static int pool_run(const Pool *P, size_t b, int64_t h, const int64_t *x, size_t k, int64_t *first, int64_t *end) {
    size_t t = (size_t)P->box_table[b], M = P->n_mixed, c0 = P->n_col - M;
    const int64_t *start = P->start + P->start_at[t], *lo = P->lim + b * 2 * P->n_col, *hi = lo + P->n_col;
    int64_t m = P->cum_at[t + 1] - P->cum_at[t] - 1, at, to;
    if (!M) {
        at = start[h], to = start[h + 1];
    } else { /* the pool's part of mixed form i may be lo - p .. hi - p, p the row's patterned part */
        int64_t stride = P->q_dims[M - 1], base = h * (int64_t)P->n_q, rem = (int64_t)k;
        int ok = 1;
        for (size_t i = M - 1; i-- > 0;) { /* k's digits, the last mixed form's but one first */
            int64_t v = rem % P->q_dims[i], p = x[c0 + i];
            rem /= P->q_dims[i];
            base += v * stride;
            stride *= P->q_dims[i];
            ok &= lo[c0 + i] - p <= v && v <= hi[c0 + i] - p;
        }
        int64_t p = x[c0 + M - 1], a = lo[c0 + M - 1] - p, z = hi[c0 + M - 1] - p, last = P->q_dims[M - 1];
        a = a > 0 ? a : 0;
        z = z < last - 1 ? z : last - 1;
        if (!ok || a > z) {
            *first = *end = 0;
            return 0;
        }
        at = start[base + a], to = start[base + z + 1];
    }
    if (at < 0 || at > to || to > m) return -1;
    *first = at, *end = to;
    return 0;
}

/* Is the row inside box b's listed forms (RankPool._listed_inside)? */
static inline int pool_inside(const Pool *P, size_t b, const int64_t *x) {
    const int64_t *lo = P->lim + b * 2 * P->n_col, *hi = lo + P->n_col;
    for (size_t c = 0; c + P->n_mixed < P->n_col; c++)
        if (x[c] < lo[c] || x[c] > hi[c]) return 0;
    return 1;
}

/* The row's ways in box b (RankPool.deal's w[row, j]) into *w. */
static int pool_ways(const Pool *P, size_t b, int64_t h, const int64_t *x, int64_t *w, Fault *F) {
    const int64_t *cum = P->cum + P->cum_at[P->box_table[b]];
    *w = 0;
    if (!pool_inside(P, b, x)) return 0;
    for (size_t k = 0; k < P->n_prefix; k++) {
        int64_t a, e;
        if (pool_run(P, b, h, x, k, &a, &e) < 0) return fault(F, PyExc_IndexError, "pool: a table's run out of range");
        int64_t d; /* a run's ways: below 2**62 in a well-formed table, checked all the same */
        if (__builtin_sub_overflow(cum[e], cum[a], &d) || d < 0 || __builtin_add_overflow(*w, d, w))
            return fault(F, PyExc_ValueError, "pool: ways not running sums below 2**63");
    }
    return 0;
}

/* A row's signature, checked, and its class counts h and columns x. */
static int pool_row(const Pool *P, const int64_t *sig, const int64_t *h, size_t i, Fault *F) {
    if (sig[i] < 0 || (size_t)sig[i] >= P->n_sig) return fault(F, PyExc_IndexError, "pool: signature out of range");
    if (h[i] < 0 || (size_t)h[i] >= P->n_h) return fault(F, PyExc_IndexError, "pool: class counts out of range");
    return 0;
}

/* Pass 1: each row's ways over its signature's boxes (the bound of its draw). */
static int pool_totals(const Pool *P, const int64_t *sig, const int64_t *h, const int64_t *x, size_t n, int64_t *total,
                       Fault *F) {
    for (size_t i = 0; i < n; i++) {
        if (pool_row(P, sig, h, i, F) < 0) return -1;
        const int64_t *xi = x + i * P->n_col;
        for (size_t c = 0; c < P->n_col; c++) /* bounds minus these stay far from a wrap */
            if (xi[c] < -((int64_t)1 << 40) || xi[c] > (int64_t)1 << 40)
                return fault(F, PyExc_ValueError, "pool: a form value out of range");
        total[i] = 0;
        for (int64_t j = P->sig_ptr[sig[i]]; j < P->sig_ptr[sig[i] + 1]; j++) {
            int64_t w;
            if (pool_ways(P, (size_t)P->sig_box[j], h[i], xi, &w, F) < 0) return -1;
            if (__builtin_add_overflow(total[i], w, &total[i]))
                return fault(F, PyExc_ValueError, "pool: a row's ways pass 2**63");
        }
    }
    return 0;
}

/* The combo at way r of box b (PoolTable.pick): the run that holds r, then
 * the first combo whose running ways pass it, searched within that run (all
 * before it end at or below the run's start: numpy's search of the whole
 * table finds the same); into row i of the n rows of counts. */
static int pool_combo(const Pool *P, size_t b, int64_t h, const int64_t *x, int64_t r, size_t i, size_t n, int64_t *counts,
                      Fault *F) {
    size_t t = (size_t)P->box_table[b];
    const int64_t *cum = P->cum + P->cum_at[t];
    int64_t acc = 0;
    for (size_t k = 0; k < P->n_prefix; k++) {
        int64_t a, e;
        if (pool_run(P, b, h, x, k, &a, &e) < 0) return fault(F, PyExc_IndexError, "pool: a table's run out of range");
        if (r - acc < cum[e] - cum[a]) {
            size_t c = (size_t)a + upper(cum + 1 + a, (size_t)(e - a), cum[a] + (r - acc));
            if (c >= (size_t)e) return fault(F, PyExc_ValueError, "pool: ways not running sums");
            const int64_t *combo = P->combo + (size_t)(P->cum_at[t] - (int64_t)t + (int64_t)c) * P->row;
            for (size_t v = 0; v < P->row; v++) /* class v / n_seat, seat v % n_seat */
                counts[((v / P->n_seat) * n + i) * P->n_seat + v % P->n_seat] = combo[v];
            return 0;
        }
        acc += cum[e] - cum[a];
    }
    return fault(F, PyExc_ValueError, "pool: a draw past the box's ways");
}

/* Pass 2: each row's box (the first whose running ways pass its draw r),
 * then its combo at what r leaves, into counts. */
static int pool_picks(const Pool *P, const int64_t *sig, const int64_t *h, const int64_t *x, size_t n, const int64_t *r,
                      int64_t *counts, Fault *F) {
    for (size_t i = 0; i < n; i++) {
        const int64_t *xi = x + i * P->n_col;
        int64_t acc = 0, j = P->sig_ptr[sig[i]], w = 0;
        for (; j < P->sig_ptr[sig[i] + 1]; j++, acc += w) {
            if (pool_ways(P, (size_t)P->sig_box[j], h[i], xi, &w, F) < 0) return -1;
            if (r[i] - acc < w) break;
        }
        if (j == P->sig_ptr[sig[i] + 1]) return fault(F, PyExc_ValueError, "pool: a draw past the row's ways");
        if (pool_combo(P, (size_t)P->sig_box[j], h[i], xi, r[i] - acc, i, n, counts, F) < 0) return -1;
    }
    return 0;
}

/* RankPool.deal's draws: totals, one below() (Rng.below's bytes), picks.
 * The passes run without the GIL (see _sampler.c's NO GIL note). */
static int pool_pick(PyObject *bits, const Pool *P, const int64_t *sig, const int64_t *h, const int64_t *x, size_t n,
                     int64_t *counts) {
    int64_t *total = grab(S_POOL_TOTAL, (n + 1) * 8), *r = grab(S_POOL_R, (n + 1) * 8);
    Fault F = {NULL, NULL};
    int rc = -1;
    if (!total || !r) {
        PyErr_NoMemory();
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = pool_totals(P, sig, h, x, n, total, &F);
    Py_END_ALLOW_THREADS
    if (!rc) rc = below(bits, total, r, n);
    else PyErr_SetString(F.type, F.msg);
    if (!rc) {
        Py_BEGIN_ALLOW_THREADS
        rc = pool_picks(P, sig, h, x, n, r, counts, &F);
        Py_END_ALLOW_THREADS
        if (rc) PyErr_SetString(F.type, F.msg);
    }
out:
    drop(S_POOL_TOTAL, total);
    drop(S_POOL_R, r);
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

/* The buffer holds rows * cols entries of `item` bytes (8: int64 unless said otherwise). */
static int shaped(const Py_buffer *v, size_t rows, size_t cols, size_t item, const char *what) {
    if ((size_t)v->len != rows * cols * item) {
        PyErr_Format(PyExc_ValueError, "paired: %s has the wrong size", what);
        return -1;
    }
    return 0;
}

/* The entry size of the pair tables whose view is v: 8 for int64, 4 for
 * uint32, read from the array's own format (so the size and the dtype cannot
 * disagree); 0, with an exception set, for any other type (a float64 or
 * int32 array of the right size would read as wild counts). */
static size_t table_item(const Py_buffer *v) {
    Py_buffer f;
    if (!v->obj || PyObject_GetBuffer(v->obj, &f, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "paired: tables must be an int64 or uint32 array");
        return 0;
    }
    const char *c = f.format ? f.format : "B";
    if (*c == '@' || *c == '=' || *c == '<') c++;
    size_t item = f.itemsize == 8 && (!strcmp(c, "l") || !strcmp(c, "q"))   ? 8
                  : f.itemsize == 4 && (!strcmp(c, "I") || !strcmp(c, "L")) ? 4
                                                                             : 0;
    PyBuffer_Release(&f);
    if (!item) PyErr_SetString(PyExc_TypeError, "paired: tables must be an int64 or uint32 array");
    return item;
}

/* A table of whole rows of n_z int64 (Y or V) and its map of one row per
 * group: n_q entries, each a row of the table. */
static int rows_of(const Py_buffer *table, const Py_buffer *row_of, const Dims *D, const char *what) {
    size_t n_rows = D->n_z ? (size_t)table->len / 8 / D->n_z : 0;
    if (!n_rows || (size_t)table->len != n_rows * D->n_z * 8 || (size_t)row_of->len != D->n_q * 8) {
        PyErr_Format(PyExc_ValueError, "paired: %s has the wrong size", what);
        return -1;
    }
    return in_range(row_of->buf, D->n_q, (int64_t)n_rows, what);
}

static PyObject *p_z1(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[9]; /* q, w_hi, w_lo, tables, group_table, y, guide, out, y_of */
    Py_ssize_t n_z;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*y*nw*w*", &bits, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[8], &n_z, &b[6],
                          &b[7]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = (size_t)b[1].len / 8, item = table_item(&b[3]);
    Dims D = {n_q, n_z > 0 ? (size_t)n_z : 0, 0, b[8].buf, NULL};
    size_t rw = n_q ? (size_t)b[6].len / 8 / n_q : 0;
    int m_log = 0;
    while (m_log < 30 && 2 + ((size_t)2 << m_log) < rw) m_log++;
    int rc = !item ? -1 : !D.n_z || D.n_z >> 32 ? (PyErr_SetString(PyExc_ValueError, "paired: bad z1 shape"), -1) : 0;
    if (!rc && rw != 2 + ((size_t)2 << m_log)) /* 2 + 2m words a row, m a power of two */
        rc = (PyErr_SetString(PyExc_ValueError, "paired: the guide has the wrong shape"), -1);
    if (!rc) D.n_t = (size_t)b[3].len / item / D.n_z;
    if (!rc) rc = shaped(&b[2], n_q, 1, 8, "w_lo");
    if (!rc) rc = shaped(&b[3], D.n_t, D.n_z, item, "tables");
    if (!rc) rc = shaped(&b[4], n_q, 1, 8, "group_table");
    if (!rc) rc = rows_of(&b[5], &b[8], &D, "y");
    if (!rc) rc = shaped(&b[6], n_q, rw, 8, "guide");
    if (!rc) rc = shaped(&b[7], n, 1, 8, "out");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc)
        rc = draw_z1(bits, &D, b[0].buf, n, b[1].buf, b[2].buf, &(Guided){b[3].buf, b[4].buf, b[5].buf, b[6].buf, m_log, item},
                     b[7].buf);
    release(b, 9);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *p_z2(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[14]; /* q, z1, y, v, accept_ptr, accept_idx, group_sig, out, accept_w, run_ptr, runs u8, y_of, v_of, prefix u8 */
    Py_ssize_t n_z;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*ny*y*y*y*y*y*y*y*y*w*", &bits, &b[0], &b[1], &b[2], &b[11], &n_z, &b[3], &b[12], &b[4],
                          &b[5], &b[8], &b[6], &b[9], &b[10], &b[13], &b[7]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = (size_t)b[6].len / 8;
    Dims D = {n_q, n_z > 0 ? (size_t)n_z : 0, 0, b[11].buf, b[12].buf};
    Accepted A = {b[4].buf, b[5].buf, b[8].buf, b[9].buf, b[10].len ? b[10].buf : NULL,
                  b[4].len >= 8 ? (size_t)b[4].len / 8 - 1 : 0, (size_t)b[5].len / 8, 0, (size_t)b[10].len / 8};
    A.n_sig = D.n_z ? A.rows / D.n_z : 0;
    int rc = !D.n_z || A.rows != A.n_sig * D.n_z || b[8].len != b[5].len
                 ? (PyErr_SetString(PyExc_ValueError, "paired: bad z2 shape"), -1)
                 : 0;
    if (!rc) rc = shaped(&b[1], n, 1, 8, "z1");
    if (!rc) rc = rows_of(&b[2], &b[11], &D, "y");
    if (!rc) rc = rows_of(&b[3], &b[12], &D, "v");
    if (!rc) rc = shaped(&b[7], n, 1, 8, "out");
    if (!rc && A.runs) rc = shaped(&b[9], A.rows + 1, 1, 8, "run_ptr");
    if (!rc && A.runs && b[13].len) { /* V's running sums: a row for each row of V, and a 0 before each */
        rc = shaped(&b[13], (size_t)b[3].len / 8 / D.n_z, D.n_z + 1, 8, "prefix");
        A.prefix = b[13].buf;
    }
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)D.n_z, "z1");
    if (!rc) rc = draw_z2(bits, &D, b[0].buf, b[1].buf, n, b[2].buf, b[3].buf, &A, b[6].buf, b[7].buf);
    release(b, 14);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *p_cell(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b[11]; /* q, z2, v, group_start, cell_order, run_table, tables, cell_at, cell_sums, out, v_of */
    Py_ssize_t n_z;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*ny*y*y*y*y*w*w*", &bits, &b[0], &b[1], &b[2], &b[10], &n_z, &b[3], &b[4], &b[5],
                          &b[6], &b[7], &b[8], &b[9]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = b[3].len >= 8 ? (size_t)b[3].len / 8 - 1 : 0, n_cells = (size_t)b[4].len / 8;
    Dims D = {n_q, n_z > 0 ? (size_t)n_z : 0, 0, NULL, b[10].buf};
    Cells C = {b[3].buf, b[4].buf, b[7].buf, b[6].buf, b[5].buf, b[8].buf, n_cells, (size_t)b[8].len / 8, table_item(&b[6])};
    int rc = !C.item ? -1 : !D.n_z ? (PyErr_SetString(PyExc_ValueError, "paired: bad cell shape"), -1) : 0;
    if (!rc) D.n_t = (size_t)b[6].len / C.item / D.n_z;
    if (!rc) rc = shaped(&b[1], n, 1, 8, "z2");
    if (!rc) rc = rows_of(&b[2], &b[10], &D, "v");
    if (!rc) rc = shaped(&b[5], n_cells, 1, 4, "run_table");
    if (!rc) rc = shaped(&b[6], D.n_t, D.n_z, C.item, "tables");
    if (!rc) rc = shaped(&b[7], n_q, 1, 8, "cell_at");
    if (!rc) rc = shaped(&b[9], n, 1, 8, "out");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)D.n_z, "z2");
    if (!rc) rc = draw_cell(bits, &D, b[0].buf, b[1].buf, n, b[2].buf, &C, b[9].buf);
    release(b, 11);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* The split arrays, a tuple (support, support_packed, z_packed, guard,
 * z_flat, g, n_used, pos, used, split_at u8, split_list u8), into S: 0 with
 * the views (b[9]) to release, or -1 with an exception set and none held. */
static int splits_of(PyObject *args, Splits *S, Py_buffer *b) {
    long long guard;
    Py_ssize_t n_used;
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "paired: the split arrays are a tuple");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "y*y*y*Ly*y*ny*y*w*w*", &b[0], &b[1], &b[2], &guard, &b[3], &b[4], &n_used, &b[5], &b[8],
                          &b[6], &b[7]))
        return -1;
    size_t n_z = (size_t)b[2].len / 8, zsize = (size_t)b[5].len / 8;
    size_t n_cols = n_used > 0 ? (size_t)b[4].len / 8 / (size_t)n_used : 0;
    *S = (Splits){b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[8].buf,
                  n_cols ? (size_t)b[0].len / 8 / n_cols : 0, zsize, (size_t)n_used, n_z, guard, NULL, NULL, 0, n_cols};
    int rc = !n_cols || !S->width ? (PyErr_SetString(PyExc_ValueError, "paired: bad split shape"), -1) : 0;
    if (!rc) rc = shaped(&b[0], n_cols, S->width, 8, "support");
    if (!rc) rc = shaped(&b[1], n_cols, S->width, 8, "support_packed");
    if (!rc) rc = shaped(&b[3], n_z, 1, 8, "z_flat");
    if (!rc) rc = shaped(&b[4], n_cols, S->n_used, 8, "g");
    if (!rc) rc = shaped(&b[8], S->n_used, 1, 8, "used");
    for (size_t p = 0; !rc && p < S->n_used; p++) /* a place's flat vector is read as a split's */
        if (S->used[p] < 0 || (size_t)S->used[p] >= zsize) rc = (PyErr_SetString(PyExc_ValueError, "paired: used out of range"), -1);
    /* the list: used when given (split_at one word per (column, z), split_list its count and room) and
     * when its entries can pack the places in g and its words a list's count (at most the support's width) */
    if (!rc && b[6].len) rc = shaped(&b[6], n_cols, n_z, 8, "split_at");
    if (!rc && b[6].len && b[7].len >= 8 && S->n_used <= LIST_PLACES && S->width <= 1 << 16) {
        S->at = b[6].buf;
        S->list = b[7].buf;
        S->cap = 2 * ((size_t)b[7].len / 8 - 1);
        if (S->list[0] > S->cap) rc = (PyErr_SetString(PyExc_ValueError, "paired: split_list is not a list"), -1);
    }
    if (rc) release(b, 9);
    return rc;
}

static PyObject *p_split(PyObject *self, PyObject *args) {
    PyObject *bits, *arrays;
    Py_buffer b[6], sb[9]; /* ca, cb, z, total, va, vb; the split arrays */
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*Ow*w*", &bits, &b[0], &b[1], &b[2], &b[3], &arrays, &b[4], &b[5])) return NULL;
    size_t n = (size_t)b[0].len / 8;
    Splits S;
    int rc = splits_of(arrays, &S, sb), got = rc == 0;
    for (int i = 1; i < 4 && !rc; i++) rc = shaped(&b[i], n, 1, 8, "a split argument");
    for (int i = 4; i < 6 && !rc; i++) rc = shaped(&b[i], n, 1, 8, "a split output");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)S.n_cols, "column");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)S.n_cols, "column");
    if (!rc) rc = in_range(b[2].buf, n, (int64_t)S.n_z, "pair vector");
    if (!rc) rc = draw_split(bits, &S, b[0].buf, b[1].buf, b[2].buf, b[3].buf, n, b[4].buf, b[5].buf, NULL);
    release(b, 6);
    if (got) release(sb, 9);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* Both splits of PairedSampler.draw (S+H of z1 by the group's table, then
 * D+C of z2 by the cell's), their columns and tables' totals read here:
 * the places in g of the four suits' vectors into places (n, 4). */
static PyObject *p_splits(PyObject *self, PyObject *args) {
    PyObject *bits, *arrays;
    Py_buffer b[9], sb[9]; /* q, cell, z1, z2, group_table, cell_table, cell_cols, tables, places; the split arrays */
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*y*y*y*y*Ow*", &bits, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7],
                          &arrays, &b[8]))
        return NULL;
    size_t n = (size_t)b[0].len / 8, n_q = (size_t)b[4].len / 8, n_cells = (size_t)b[5].len / 8;
    Splits S;
    int rc = splits_of(arrays, &S, sb), got = rc == 0;
    Pairs P = {b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[6].buf, b[7].buf, 0, 0};
    if (!rc && !(P.item = table_item(&b[7]))) rc = -1;
    if (!rc && !S.n_z) rc = (PyErr_SetString(PyExc_ValueError, "paired: bad split shape"), -1);
    if (!rc) P.n_t = (size_t)b[7].len / P.item / S.n_z;
    if (!rc) rc = shaped(&b[1], n, 1, 8, "cell");
    for (int i = 2; i < 4 && !rc; i++) rc = shaped(&b[i], n, 1, 8, "a pair vector");
    if (!rc) rc = shaped(&b[6], n_cells, 4, 8, "cell_cols");
    if (!rc) rc = shaped(&b[7], P.n_t, S.n_z, P.item, "tables");
    if (!rc) rc = shaped(&b[8], n, 4, 8, "places");
    if (!rc) rc = in_range(b[0].buf, n, (int64_t)n_q, "group");
    if (!rc) rc = in_range(b[1].buf, n, (int64_t)n_cells, "cell");
    if (!rc) rc = in_range(b[2].buf, n, (int64_t)S.n_z, "z1");
    if (!rc) rc = in_range(b[3].buf, n, (int64_t)S.n_z, "z2");
    if (!rc) rc = BY_ITEM(P.item, draw_pairs, bits, &S, &P, n, b[8].buf);
    release(b, 9);
    if (got) release(sb, 9);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* An int64 array's buffer (C-contiguous, of format l or q; writable if
 * asked): the pool's arrays are checked for their type, not only their
 * size, since a float64 array of the right size would read as wild ints. */
static int i64(PyObject *o, Py_buffer *v, int writable, const char *what) {
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) return -1;
    const char *f = v->format ? v->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if (v->itemsize != 8 || (strcmp(f, "l") && strcmp(f, "q"))) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_TypeError, "pool: %s must be an int64 array", what);
        return -1;
    }
    return 0;
}

/* Offsets off[0..k] that start at 0, step by at least `least` (exactly, if
 * `exact`) and end at `total` (the steps taken unsigned: wild offsets do not wrap). */
static int offsets(const int64_t *off, size_t k, int64_t least, int exact, size_t total, const char *what) {
    int ok = off[0] == 0 && off[k] == (int64_t)total;
    for (size_t i = 0; ok && i < k; i++) {
        uint64_t step = (uint64_t)off[i + 1] - (uint64_t)off[i];
        ok = off[i + 1] >= off[i] && (exact ? step == (uint64_t)least : step >= (uint64_t)least);
    }
    if (!ok) PyErr_Format(PyExc_ValueError, "pool: %s are not offsets of the tables", what);
    return ok ? 0 : -1;
}

#define N_POOL_ARRAYS 10 /* then n_h */

/* The pool's tuple (sig_ptr, sig_box, lim, box_table, start_at, cum_at,
 * start, cum, combo, q_dims, n_h) into its views b[N_POOL_ARRAYS] (all
 * held, or none with -1 and an exception set) and n_h. */
static int pool_views(PyObject *args, Py_buffer *b, Py_ssize_t *n_h) {
    static const char *names[N_POOL_ARRAYS] = {"sig_ptr", "sig_box", "lim", "box_table", "start_at",
                                               "cum_at", "start", "cum", "combo", "q_dims"};
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != N_POOL_ARRAYS + 1) {
        PyErr_SetString(PyExc_TypeError, "pool: the pool arrays are a tuple of 11");
        return -1;
    }
    *n_h = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, N_POOL_ARRAYS));
    if (*n_h == -1 && PyErr_Occurred()) return -1;
    for (int i = 0; i < N_POOL_ARRAYS; i++)
        if (i64(PyTuple_GET_ITEM(args, i), &b[i], 0, names[i]) < 0) {
            release(b, i);
            return -1;
        }
    return 0;
}

/* The pool arrays into P for rows of n_col columns and combos of n_class
 * classes and n_seat seats: 0 with the views (b[N_POOL_ARRAYS]) to release,
 * or -1 with an exception set and none held.  Every index the passes
 * follow without a check of their own is checked here. */
static int pool_of(PyObject *args, Pool *P, size_t n_col, size_t n_class, size_t n_seat, Py_buffer *b) {
    Py_ssize_t n_h;
    if (pool_views(args, b, &n_h) < 0) return -1;
    *P = (Pool){b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[4].buf, b[5].buf, b[6].buf, b[7].buf, b[8].buf, b[9].buf,
                b[0].len >= 8 ? (size_t)b[0].len / 8 - 1 : 0, (size_t)b[3].len / 8, b[4].len >= 8 ? (size_t)b[4].len / 8 - 1 : 0,
                n_col, (size_t)b[9].len / 8, n_h > 0 ? (size_t)n_h : 0, 1, 1, n_class * n_seat, (size_t)b[6].len / 8,
                (size_t)b[7].len / 8, n_seat};
    size_t n_sb = (size_t)b[1].len / 8;
    int rc = !P->n_sig || !P->n_box || !P->n_tab || !P->n_h || !P->row || P->n_mixed > n_col
                 ? (PyErr_SetString(PyExc_ValueError, "pool: bad shape"), -1)
                 : 0;
    for (size_t i = 0; !rc && i < P->n_mixed; i++) { /* at most 2**20 runs a box, 2**40 starts a table: no wrap */
        if (P->q_dims[i] < 1 || P->q_dims[i] > 1 << 20 || (P->n_q *= (size_t)P->q_dims[i]) > (size_t)1 << 40)
            rc = (PyErr_SetString(PyExc_ValueError, "pool: bad q_dims"), -1);
        else if (i + 1 < P->n_mixed && (P->n_prefix *= (size_t)P->q_dims[i]) > (size_t)1 << 20)
            rc = (PyErr_SetString(PyExc_ValueError, "pool: too many runs"), -1);
    }
    if (!rc && P->n_h > ((size_t)1 << 40) / P->n_q) rc = (PyErr_SetString(PyExc_ValueError, "pool: bad n_h"), -1);
    if (!rc) rc = shaped(&b[2], P->n_box, 2 * n_col, 8, "lim");
    if (!rc) rc = shaped(&b[5], P->n_tab + 1, 1, 8, "cum_at");
    if (!rc) rc = offsets(P->sig_ptr, P->n_sig, 0, 0, n_sb, "sig_ptr");
    if (!rc) rc = offsets(P->start_at, P->n_tab, (int64_t)(P->n_h * P->n_q + 1), 1, P->n_start, "start_at");
    if (!rc) rc = offsets(P->cum_at, P->n_tab, 1, 0, P->n_cum, "cum_at");
    if (!rc) rc = shaped(&b[8], P->n_cum - P->n_tab, P->row, 8, "combo");
    if (!rc) rc = in_range(P->sig_box, n_sb, (int64_t)P->n_box, "box");
    if (!rc) rc = in_range(P->box_table, P->n_box, (int64_t)P->n_tab, "table");
    for (size_t i = 0; !rc && i < P->n_box * 2 * n_col; i++) /* a bound minus a form value: no wrap */
        if (P->lim[i] < -((int64_t)1 << 40) || P->lim[i] > (int64_t)1 << 40)
            rc = (PyErr_SetString(PyExc_ValueError, "pool: a box bound out of range"), -1);
    if (rc) release(b, N_POOL_ARRAYS);
    return rc;
}

/* RankPool.deal's box and combo: rows of signature sig, class counts h and
 * columns x (n, n_col); each row's combo into counts (classes, n, seats). */
static PyObject *p_pool_pick(PyObject *self, PyObject *args) {
    PyObject *bits, *o[4], *arrays;
    Py_buffer b[4], pb[N_POOL_ARRAYS]; /* sig, h, x, counts; the pool arrays */
    static const char *names[4] = {"sig", "h", "x", "counts"};
    if (!PyArg_ParseTuple(args, "OOOOOO", &bits, &o[0], &o[1], &o[2], &arrays, &o[3])) return NULL;
    for (int i = 0; i < 4; i++)
        if (i64(o[i], &b[i], i == 3, names[i]) < 0) {
            release(b, i);
            return NULL;
        }
    size_t n = (size_t)b[0].len / 8, n_col = n ? (size_t)b[2].len / 8 / n : 0;
    Pool P;
    int rc = shaped(&b[1], n, 1, 8, "h"), got = 0;
    if (!rc) rc = shaped(&b[2], n, n_col, 8, "x");
    if (!rc && (b[3].ndim != 3 || (size_t)b[3].shape[1] != n))
        rc = (PyErr_SetString(PyExc_ValueError, "pool: counts has the wrong size (classes, rows, seats)"), -1);
    if (!rc && n) got = !(rc = pool_of(arrays, &P, n_col, (size_t)b[3].shape[0], (size_t)b[3].shape[2], pb));
    if (!rc && n) rc = pool_pick(bits, &P, b[0].buf, b[1].buf, b[2].buf, n, b[3].buf);
    release(b, 4);
    if (got) release(pb, N_POOL_ARRAYS);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"z1", p_z1, METH_VARARGS, "z1(bits, q, w_hi u8, w_lo u8, tables, group_table, y, y_of, n_z, guide u8, out)."},
    {"z2", p_z2, METH_VARARGS,
     "z2(bits, q, z1, y, y_of, n_z, v, v_of, accept_ptr, accept_idx, accept_w, group_sig, run_ptr, runs u8, prefix u8, out)."},
    {"cell", p_cell, METH_VARARGS,
     "cell(bits, q, z2, v, v_of, n_z, group_start, cell_order, run_table i4, tables, cell_at, cell_sums, out)."},
    {"split", p_split, METH_VARARGS,
     "split(bits, ca, cb, z, total, (support, support_packed, z_packed, guard, z_flat, g, n_used, pos, used, split_at u8, "
     "split_list u8), va, vb)."},
    {"splits", p_splits, METH_VARARGS,
     "splits(bits, q, cell, z1, z2, group_table, cell_table, cell_cols, tables, split arrays, places (n, 4)): both "
     "splits, each suit's place in g."},
    {"pool_pick", p_pool_pick, METH_VARARGS,
     "pool_pick(bits, sig, h, x, (sig_ptr, sig_box, lim, box_table, start_at, cum_at, start, cum, combo, q_dims, n_h), "
     "counts (classes, n, seats)): RankPool.deal's box and combo of each row."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_paired", "truedeal compiled paired-listing draws", -1, methods};

PyMODINIT_FUNC PyInit__paired(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (m && PyModule_AddIntConstant(m, "CELL_BLOCK", CELL_BLOCK) < 0) Py_CLEAR(m);
    return m;
}
