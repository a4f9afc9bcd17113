/* truedeal._sampler: the sampler's hot path (integer draws, categorical
 * searches, the partial Fisher-Yates deal) in C.
 *
 * The seeded stream is a published contract, so every function here consumes
 * the random bytes in exactly the order, and in exactly the amounts, of its
 * numpy reference (truedeal/randomness.py, sampling.py, fill.py) and returns
 * the same draws; tests/test_kernel_sampler.py checks it byte for byte.  The
 * bytes still come from the Python bit source (``bits.readinto`` or
 * ``bits.read``): SHAKE-256 is hashlib's, and a read of n bytes here is a
 * read of n bytes there.
 *
 * Arrays arrive as C-contiguous buffers (the wrappers in truedeal/kernel.py
 * check dtypes and shapes): int64 unless said otherwise.
 *
 *   below(bits, bounds, out)                      Rng.below
 *   below_wide(bits, top, low_max, shift, hi, lo) Rng.below_wide
 *   wide_locate(bits, top, low_max, shift, cum_hi, cum_lo, out, guide, guide_shift)
 *                                                 WideCategorical.draw
 *   locate(bits, keys, cum, qkey, total, out, starts)
 *                                                 Sampler._split / _option
 *   level1(bits, prefix, shape, nb, ne, which, lo, hi, exact, z2)
 *                                                 Sampler._level1's coordinate draws
 *   deal(bits, owners u8, cards, counts, dest u8, take)   fill._deal
 *   fill(bits, roles, n_pat, owners u8, lengths, masks u16, free_to_shape)
 *                                                 fill.fill_deals
 *   draw(bits, top, low_max, shift, guide_shift, nb, roles, n_pat, arrays, owners u8)
 *                                                 Sampler.draw: all of the above in one call
 *
 * The integer draws themselves (below, below_wide) are in _draws.h, shared
 * with truedeal._paired.
 */
#include "_draws.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------ searches */

/* WideCategorical.draw's search: for each draw (hi[r], lo[r]), the first
 * index whose cumulative total (cum_hi, cum_lo) exceeds it; guide[b] is the
 * first index whose high key is >= b << gshift (ng == 0: search it all). */
static void wide_search(const int64_t *cum_hi, const uint64_t *cum_lo, size_t nc, const int64_t *guide, size_t ng,
                        int gshift, const int64_t *hi, const uint64_t *lo, size_t n, int64_t *o) {
    for (size_t r = 0; r < n; r++) {
        size_t from = 0, to = nc, b = gshift >= 0 && gshift < 63 ? (size_t)(hi[r] >> gshift) : ng;
        if (b + 1 < ng) { /* every key before guide[b] is below hi[r], the key at guide[b + 1] above it */
            from = guide[b] < 0 ? 0 : (size_t)guide[b] < nc ? (size_t)guide[b] : nc;
            to = guide[b + 1] < (int64_t)from ? from : (size_t)guide[b + 1] < nc ? (size_t)guide[b + 1] : nc;
        }
        size_t right = from + upper(cum_hi + from, to - from, hi[r]), left = from + lower(cum_hi + from, to - from, hi[r]);
        o[r] = (int64_t)right;
        for (size_t i = left; i < right; i++)
            if (lo[r] < cum_lo[i]) {
                o[r] = (int64_t)i;
                break;
            }
    }
}

/* One row of locate_rows. */
static inline int64_t locate_row(const int64_t *keys, const int64_t *cum, size_t nc, const int64_t *starts, size_t ns,
                                 int64_t q, int64_t r) {
    size_t start = 0, end = 0, at;
    int table = q >= 0 && (size_t)q + 1 < ns;
    if (table) {
        start = (size_t)starts[q];
        end = (size_t)starts[q + 1];
        table = start <= end && end <= nc;
    }
    if (table) { /* the run of q from the table, searched first */
        int64_t x = (start ? cum[start - 1] : 0) + r;
        at = start + upper(cum + start, end - start, x);
        if (at == end) at = upper(cum, nc, x); /* beyond the run: as the full search */
    } else {
        start = lower(keys, nc, q);
        at = upper(cum, nc, (start ? cum[start - 1] : 0) + r);
    }
    return (int64_t)at;
}

#define LOCATE_LANES 8

/* Sampler._split / _option's search: within the run of `keys` equal to
 * q[i], the entry whose cumulative weight first exceeds the run's base +
 * r[i]; starts[k] is where key k's run starts (ns == 0: search it all).
 * Eight rows at a time are halved in step (upper's steps, a row whose run is
 * done halving by 0), so that their reads of `cum`, a table past the caches,
 * wait together instead of one after another; a group with a row whose run
 * is not in the table, or is empty, is located row by row. */
static void locate_rows(const int64_t *keys, const int64_t *cum, size_t nc, const int64_t *starts, size_t ns,
                        const int64_t *q, const int64_t *r, size_t n, int64_t *o) {
    size_t i = 0;
    for (; i + LOCATE_LANES <= n; i += LOCATE_LANES) {
        const int64_t *base[LOCATE_LANES];
        size_t len[LOCATE_LANES], end[LOCATE_LANES], most = 0;
        int64_t x[LOCATE_LANES];
        int k = 0;
        for (; k < LOCATE_LANES; k++) {
            int64_t qk = q[i + k];
            if (qk < 0 || (size_t)qk + 1 >= ns) break;
            size_t start = (size_t)starts[qk];
            end[k] = (size_t)starts[qk + 1];
            if (start >= end[k] || end[k] > nc) break;
            base[k] = cum + start;
            len[k] = end[k] - start;
            x[k] = (start ? cum[start - 1] : 0) + r[i + k];
            most = len[k] > most ? len[k] : most;
        }
        if (k < LOCATE_LANES) {
            for (k = 0; k < LOCATE_LANES; k++) o[i + k] = locate_row(keys, cum, nc, starts, ns, q[i + k], r[i + k]);
            continue;
        }
        for (size_t m = most; m > 1; m -= m / 2) /* as many steps as the longest run takes */
            for (k = 0; k < LOCATE_LANES; k++) {
                size_t half = len[k] / 2;
                base[k] = base[k][half] <= x[k] ? base[k] + half : base[k];
                len[k] -= half;
            }
        for (k = 0; k < LOCATE_LANES; k++) {
            size_t at = (size_t)(base[k] - cum) + (*base[k] <= x[k]);
            o[i + k] = (int64_t)(at == end[k] ? upper(cum, nc, x[k]) : at); /* beyond the run: as the full search */
        }
    }
    for (; i < n; i++) o[i] = locate_row(keys, cum, nc, starts, ns, q[i], r[i]);
}

/* ------------------------------------------------------------ the deal */

/* memcpy of a few bytes (a row's lengths, masks or cards): fixed-size
 * copies, inlined, where a copy of a size known at run time is a libc call
 * per row. */
static inline void copy_small(void *dst, const void *src, size_t n) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) { /* two copies that overlap in the middle */
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}


/* NO GIL: the loops between the reads of the bits touch no Python object
 * and no scratch slot (grab and drop need the GIL), so they let go of the
 * GIL: a job's chunk-writer thread then packs and sends the last chunk on
 * the other core instead of waiting for the draw, and holding it up. */

/* The bound of position i's draw in a row of `length` cards: max(length - i, 1). */
static inline uint32_t bound_at(int64_t length, size_t i) {
    return length > (int64_t)i + 1 ? (uint32_t)(length - (int64_t)i) : 1u;
}

/* Draw k's first try from its two bytes u: the pick, and k into redo when
 * Lemire rejects it (its low half < (2**16 - b) % b, which needs low < b). */
static inline void first_try(uint32_t u, uint32_t b, size_t k, uint8_t *pick, size_t *redo, size_t *bad) {
    uint32_t x = u * b, low = x & 0xFFFF;
    pick[k] = (uint8_t)(x >> 16);
    if (__builtin_expect(low < b, 0) && low < (65536u - b) % b) redo[(*bad)++] = k;
}

/* The first tries of all the draws (the rejected ones into redo, in index
 * order; their number returned); len16: the lengths, each < 2**16.  With
 * SSE2, eight rows at a time: pick = the high half of u * b, and the rows
 * whose low half is below b are looked at one by one. */
static size_t first_tries(const uint8_t *buf, const int64_t *length, const uint16_t *len16, size_t n, size_t steps,
                          uint8_t *pick, size_t *redo) {
    size_t bad = 0;
    for (size_t i = 0, k = 0; i < steps; i++) {
        size_t r = 0;
#ifdef __SSE2__
        const __m128i at = _mm_set1_epi16((short)i), one = _mm_set1_epi16(1), zero = _mm_setzero_si128();
        for (; r + 8 <= n; r += 8, k += 8) {
            __m128i b = _mm_max_epi16(_mm_subs_epu16(_mm_loadu_si128((const __m128i *)(len16 + r)), at), one);
            __m128i u = _mm_loadu_si128((const __m128i *)(buf + 2 * k)); /* (little-endian words, as below) */
            __m128i hi = _mm_mulhi_epu16(u, b), lo = _mm_mullo_epi16(u, b);
            _mm_storel_epi64((__m128i *)(pick + k), _mm_packus_epi16(hi, hi));
            if (__builtin_expect(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_subs_epu16(b, lo), zero)) != 0xFFFF, 0))
                for (size_t t = 0; t < 8; t++)
                    first_try((uint32_t)(buf[2 * (k + t)] | buf[2 * (k + t) + 1] << 8), bound_at(length[r + t], i), k + t,
                              pick, redo, &bad);
        }
#else
        (void)len16;
#endif
        for (; r < n; r++, k++)
            first_try((uint32_t)(buf[2 * k] | buf[2 * k + 1] << 8), bound_at(length[r], i), k, pick, redo, &bad);
    }
    return bad;
}

/* The draws of a partial Fisher-Yates over n rows: draw k = i * n + r
 * (position-major) is uniform below max(length[r] - i, 1), i < steps, into
 * pick[k].  The same draws from the same bytes as below() on those bounds
 * (they are all < 2**16: Lemire on 16-bit words, the rejected draws redone
 * in index order), but with no bound or index arrays: this is the fill's
 * hot loop, and its bounds are < 53, so a pick fits a byte. */
static int positions(PyObject *bits, const int64_t *length, size_t n, size_t steps, uint8_t *pick) {
    size_t cnt = steps * n, bad = 0;
    uint8_t *buf = grab(S_LEMIRE, 2 * cnt + 1);
    size_t *redo = grab(S_IDX, (cnt + 1) * sizeof *redo);
    uint16_t *len16 = grab(S_LEN16, (n + 1) * sizeof *len16);
    int rc = -1;
    if (!buf || !redo || !len16) {
        PyErr_NoMemory();
        goto out;
    }
    for (size_t r = 0; r < n; r++) len16[r] = (uint16_t)(length[r] < 0 ? 0 : length[r] > 0xFFFF ? 0xFFFF : length[r]);
    if (read_bits(bits, 2 * cnt, buf) < 0) goto out;
    Py_BEGIN_ALLOW_THREADS
    bad = first_tries(buf, length, len16, n, steps, pick, redo);
    Py_END_ALLOW_THREADS
    while (bad) {
        if (read_bits(bits, 2 * bad, buf) < 0) goto out;
        size_t again = 0;
        for (size_t j = 0; j < bad; j++) {
            size_t k = redo[j], i = k / n;
            int64_t len = length[k % n];
            uint32_t b = bound_at(len, i);
            uint32_t x = (uint32_t)(buf[2 * j] | buf[2 * j + 1] << 8) * b, low = x & 0xFFFF;
            pick[k] = (uint8_t)(x >> 16);
            if (low < b && low < (65536u - b) % b) redo[again++] = k;
        }
        bad = again;
    }
    rc = 0;
out:
    drop(S_LEMIRE, buf);
    drop(S_IDX, redo);
    drop(S_LEN16, len16);
    return rc;
}


/* A row's shuffled list l to its blocks: position p goes to dest[block],
 * block = how many block ends (running sums of its counts c, into ends) are
 * <= p, when that is a block (numpy's rule); no block starts at or after the
 * last end.  Each position counts the ends without a branch: a loop per
 * block would mispredict at its end, the blocks' lengths varying row by row
 * (restrict: a store to o changes neither l nor dest). */
static inline __attribute__((always_inline)) void write_blocks(uint8_t *restrict o, const uint8_t *restrict l, const int64_t *c, int64_t *restrict ends,
                                size_t K, const uint8_t *restrict dest, int64_t width) {
    int64_t end = 0, top = 0;
    for (size_t k = 0; k < K; k++) {
        ends[k] = end += c[k];
        top = end > top ? end : top;
    }
    top = top < width ? top : width;
    for (int64_t p = 0; p < top; p++) {
        size_t block = 0;
        for (size_t k = 0; k < K; k++) block += ends[k] <= p;
        if (block < K) o[l[p]] = dest[block];
    }
}

/* write_blocks when no count is negative and none is past 16 (a seat's
 * cards of one deal): each block's seat laid out at its positions by a
 * 16-byte store, in block order (a later block's store overwrites the tail of
 * the one before), then each position's card to its block's seat; no
 * comparison a position. */
static inline void write_short_blocks(uint8_t *restrict o, const uint8_t *restrict l, const int64_t *c, size_t K,
                                      const uint8_t *restrict dest) {
    uint8_t seat_at[NCARDS + 16];
    size_t end = 0;
    for (size_t k = 0; k < K; k++) {
#ifdef __SSE2__
        _mm_storeu_si128((__m128i *)(seat_at + end), _mm_set1_epi8((char)dest[k]));
#else
        memset(seat_at + end, dest[k], (size_t)c[k]);
#endif
        end += (size_t)c[k];
    }
    for (size_t p = 0; p < end; p++) o[l[p]] = seat_at[p];
}

/* Bit c set where a row's card c is owned by `take`: 52 byte compares as
 * four 16-byte ones (SSE2, in every x86-64), the last overlapping the third
 * so that no load reads past the row. */
static inline uint64_t owned_by(const uint8_t *o, uint8_t take) {
#ifdef __SSE2__
    const __m128i t = _mm_set1_epi8((char)take);
#define EQ(at) ((uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(o + (at))), t)))
    return EQ(0) | EQ(16) << 16 | EQ(32) << 32 | EQ(36) << 36;
#undef EQ
#else
    uint64_t m = 0;
    for (int c = 0; c < NCARDS; c++) m |= (uint64_t)(o[c] == take) << c;
    return m;
#endif
}

#define MAX_RUNS 4

/* set_at[b]: the positions of byte b's set bits, lowest first, one to a
 * byte; n_set[b]: how many (both filled in at import). */
static uint64_t set_at[256];
static uint8_t n_set[256];

static void fill_set_tables(void) {
    for (unsigned b = 0; b < 256; b++) {
        unsigned k = 0;
        for (unsigned i = 0; i < 8; i++)
            if (b >> i & 1) set_at[b] |= (uint64_t)i << (8 * k++);
        n_set[b] = (uint8_t)k;
    }
}

/* x's set bits, lowest first, into l (their number returned), a byte of x
 * at a time, all seven bytes (a loop to the last set bit would mispredict
 * its end once a call): x < 2**52, and l must have 8 bytes of room past the
 * last bit's. */
static inline size_t list_bits(uint8_t *l, uint64_t x) {
    size_t a = 0;
    uint64_t j = 0;
#pragma GCC unroll 7
    for (int byte = 0; byte < 7; byte++, j += 0x0808080808080808ull, x >>= 8) { /* 7 bytes: x < 2**52 */
        uint64_t at = set_at[x & 0xFF] + j;
        memcpy(l + a, &at, 8);
        a += n_set[x & 0xFF];
    }
    return a;
}

/* `cards` as its ascending runs (a run's cards in card order are its set
 * bits in bit order): their masks into run, their number returned; 0 when
 * there are more than MAX_RUNS (then the rows are listed card by card). */
static size_t ascending_runs(const uint8_t *card8, size_t m, uint64_t *run) {
    size_t k = 0;
    for (size_t c = 0; c < m; c++) {
        if (!c || card8[c] <= card8[c - 1]) {
            if (k == MAX_RUNS) return 0;
            run[k++] = 0;
        }
        run[k - 1] |= 1ull << card8[c];
    }
    return k;
}

/* A row's available cards of `cards`, in the order of `cards`, into l (with
 * 8 bytes of room past m); their number returned.  With runs (n_runs > 0)
 * the cards that are not available are not listed: the shuffle and the
 * blocks read only the first `length` positions when no count is negative,
 * and a position past it only swaps with itself.  Without, they follow, in
 * card order (branch-free). */
static inline size_t list_available(uint8_t *restrict l, const uint8_t *restrict o, uint8_t take, const uint8_t *card8,
                                    size_t m, const uint64_t *run, size_t n_runs) {
    size_t a = 0, b = 0;
    if (n_runs) {
        uint64_t own = owned_by(o, take);
        for (size_t k = 0; k < n_runs; k++) a += list_bits(l + a, own & run[k]);
        return a;
    }
    uint8_t rest[NCARDS];
    for (size_t c = 0; c < m; c++) {
        size_t av = o[card8[c]] == take;
        l[a] = rest[b] = card8[c];
        a += av;
        b += 1 - av;
    }
    copy_small(l + a, rest, b);
    return a;
}

/* fill._deal: give row r's counts[r, k] cards to dest[k], a uniform choice
 * among the cards of `cards` (in that order) that row r's owner array marks
 * `take`; the partial Fisher-Yates draws all positions of all rows in one
 * Rng.below call, position-major, as the numpy path does. */
static int deal(PyObject *bits, uint8_t *owners, size_t n, const int64_t *cards, size_t m, const int64_t *counts,
                size_t K, const uint8_t *dest, uint8_t take) {
    if (!n || !K) return 0;
    int64_t *length = grab(S_LENGTH, (2 * n + K) * sizeof *length); /* then each row's need, then its block ends */
    if (!length) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t width = 0, *need = length + n;
    int negative = 0, short_blocks = 1; /* (a negative count can make a block end past the row's need) */
    for (size_t r = 0; r < n; r++) {
        need[r] = 0;
        for (size_t k = 0; k < K; k++) {
            need[r] += counts[r * K + k];
            negative |= counts[r * K + k] < 0;
            short_blocks &= counts[r * K + k] <= 16;
        }
        if (need[r] > width) width = need[r];
    }
    if (width <= 0 || (size_t)width > m) {
        drop(S_LENGTH, length);
        if (width <= 0) return 0;
        PyErr_SetString(PyExc_ValueError, "deal: a row needs more cards than it has");
        return -1;
    }
    uint8_t *lists = grab(S_LISTS, n * m + 8); /* (list_bits writes 8 bytes at a time) */
    uint8_t *pick = NULL;
    int rc = -1;
    if (!lists) goto nomem;
    uint8_t card8[NCARDS];
    for (size_t c = 0; c < m; c++) card8[c] = (uint8_t)cards[c];
    uint64_t run[MAX_RUNS];
    size_t n_runs = negative ? 0 : ascending_runs(card8, m, run);
    /* the shuffle's steps: when every row's blocks take all its cards the last block needs no shuffle */
    int64_t steps_full = 0; /* (else every row shuffles its need: width steps) */
    int full = 1;
    for (size_t r = 0; r < n; r++) {
        length[r] = (int64_t)list_available(lists + r * m, owners + r * NCARDS, take, card8, m, run, n_runs);
        full &= need[r] == length[r];
        if (need[r] - counts[r * K + K - 1] > steps_full) steps_full = need[r] - counts[r * K + K - 1];
    }
    size_t steps = (size_t)(full ? steps_full : width);
    pick = grab(S_DRAW, steps * n + 1);
    if (!pick) goto nomem;
    if (positions(bits, length, n, steps, pick) < 0) goto out;
    Py_BEGIN_ALLOW_THREADS /* pure C from here to the end: see NO GIL below */
    for (size_t i = 0; i < steps; i++) { /* position-major like the draws: reads them in order */
        const uint8_t *d = pick + i * n;
        for (size_t r = 0; r < n; r++) {
            uint8_t *l = lists + r * m;
            size_t j = i + d[r];
            uint8_t t = l[i];
            l[i] = l[j];
            l[j] = t;
        }
    }
    if (short_blocks && !negative) {
        for (size_t r = 0; r < n; r++) write_short_blocks(owners + r * NCARDS, lists + r * m, counts + r * K, K, dest);
    } else {
        for (size_t r = 0; r < n; r++) /* K as a constant where it is small: the loops over the blocks unrolled */
            switch (K) {
            case 1: write_blocks(owners + r * NCARDS, lists + r * m, counts + r, length + 2 * n, 1, dest, width); break;
            case 2: write_blocks(owners + r * NCARDS, lists + r * m, counts + r * 2, length + 2 * n, 2, dest, width); break;
            case 3: write_blocks(owners + r * NCARDS, lists + r * m, counts + r * 3, length + 2 * n, 3, dest, width); break;
            case 4: write_blocks(owners + r * NCARDS, lists + r * m, counts + r * 4, length + 2 * n, 4, dest, width); break;
            default: write_blocks(owners + r * NCARDS, lists + r * m, counts + r * K, length + 2 * n, K, dest, width);
            }
    }
    Py_END_ALLOW_THREADS
    rc = 0;
    goto out;
nomem:
    PyErr_NoMemory();
out:
    drop(S_LISTS, lists);
    drop(S_LENGTH, length);
    drop(S_DRAW, pick);
    return rc;
}


/* ------------------------------------------------------------ the fill */

/* Set bits of a 16-bit mask, without the popcount instruction (not in the
 * baseline x86-64 target, so __builtin_popcount would call libgcc). */
static inline int pc16(unsigned x) {
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (int)((x + (x >> 8)) & 0x1Fu);
}

#define OPEN 255
#define SHAPE 254

/* The layout's roles, as fill.fill_deals reads them (see s_fill). */
typedef struct {
    size_t n_rank, n_pat, n_shape, n_pooled, n_free;
    const uint8_t *rank_seat, *shape_seat, *pooled, *free;
    const int64_t *rank_pat, *shape_pat; /* pattern position, or -1 */
    int64_t n_tr[4], tr[4][13], n_sp[4], sp[4][13];
    const uint8_t *dead; /* (52,) the free seat holding a card out of the pack, or OPEN */
} Roles;

#define N_ROLES 11

/* Each row's tracked cards to the rank seats whose masks (n, 4, n_rank)
 * hold them (the last such seat, should two), the others left as they are.
 * With one rank seat, its set bits are visited; with more, each tracked card
 * takes its owner by a branch-free choice among the seats (a loop over set
 * bits mispredicts about once a seat and suit). */
static void place_honours(uint8_t *owners, size_t n, const Roles *L, const uint16_t *masks) {
    size_t n_rank = L->n_rank, n_tr[4]; /* locals: a byte store may alias L */
    uint8_t tr[4][13], seat[8];
    for (int s = 0; s < 4; s++) {
        n_tr[s] = (size_t)L->n_tr[s];
        for (size_t t = 0; t < n_tr[s]; t++) tr[s][t] = (uint8_t)L->tr[s][t];
    }
    for (size_t i = 0; i < n_rank && i < 8; i++) seat[i] = L->rank_seat[i];
    for (size_t r = 0; r < n; r++) {
        uint8_t *o = owners + r * NCARDS;
        const uint16_t *m = masks + r * 4 * n_rank;
        for (int s = 0; s < 4; s++, m += n_rank) {
            if (n_rank == 1 || n_rank > 8) {
                for (size_t i = 0; i < n_rank; i++)
                    for (unsigned b = m[i] & ((1u << n_tr[s]) - 1); b; b &= b - 1) o[tr[s][__builtin_ctz(b)]] = L->rank_seat[i];
                continue;
            }
            for (size_t t = 0; t < n_tr[s]; t++) {
                uint8_t v = o[tr[s][t]];
                for (size_t i = 0; i < n_rank; i++) v ^= (uint8_t)((v ^ seat[i]) & -(m[i] >> t & 1u));
                o[tr[s][t]] = v;
            }
        }
    }
}

/* fill.fill_deals, stage by stage, with the same deal calls in the same
 * order (so the same bytes); lengths (n, n_pat, 4) int8 (suit lengths: a
 * row's are one line, not two, in the passes below that read them once per
 * suit and seat), masks (n, 4, n_rank) uint16, fts (n, 4). */
static int fill(PyObject *bits, uint8_t *owners, size_t n, const Roles *L, const int8_t *lengths, const uint16_t *masks,
                const int64_t *fts) {
    size_t K = L->n_rank + 1 > L->n_shape ? L->n_rank + 1 : L->n_shape;
    if (L->n_free > K) K = L->n_free;
    if (L->n_pooled > K) K = L->n_pooled;
    int64_t *counts = grab(S_COUNTS, (n * K + 1) * sizeof *counts);
    if (!counts) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = -1;
    uint8_t dest[8];
    int64_t suit[13], all_spots[NCARDS], all[NCARDS];
    size_t n_all_spots = 0;
#define LEN(r, pat, s) lengths[((r) * L->n_pat + (size_t)(pat)) * 4 + (s)]
#define MASK(r, s, i) masks[((r) * 4 + (s)) * L->n_rank + (i)]
    Py_BEGIN_ALLOW_THREADS
    for (size_t r = 0; r < n; r++) memcpy(owners + r * NCARDS, L->dead, NCARDS);
    place_honours(owners, n, L, masks);
    Py_END_ALLOW_THREADS
    for (int s = 0; s < 4; s++) {
        size_t m = 0;
        for (int64_t t = 0; t < L->n_tr[s]; t++) suit[m++] = L->tr[s][t];
        for (int64_t t = 0; t < L->n_sp[s]; t++) suit[m++] = L->sp[s][t];
        /* 1. spots of the patterned rank seats (and, with a pool, of the shape-only seats) */
        size_t k = 0, k1 = L->n_pooled && L->n_shape; /* k1: the blocks of this deal */
        for (size_t i = 0; i < L->n_rank; i++) k1 += L->rank_pat[i] >= 0;
        uint16_t lowbits = (uint16_t)((1u << L->n_tr[s]) - 1);
        for (size_t i = 0; i < L->n_rank; i++)
            if (L->rank_pat[i] >= 0) dest[k++] = L->rank_seat[i];
        for (size_t r = 0; r < n; r++) /* one pass over the rows for all the seats (rows are far apart) */
            for (size_t i = 0, j = 0; i < L->n_rank; i++)
                if (L->rank_pat[i] >= 0) counts[r * k1 + j++] = LEN(r, L->rank_pat[i], s) - pc16(MASK(r, s, i) & lowbits);
        if (L->n_pooled && L->n_shape) {
            for (size_t r = 0; r < n; r++) {
                int64_t tot = 0;
                for (size_t j = 0; j < L->n_shape; j++) tot += LEN(r, L->shape_pat[j], s);
                counts[r * k1 + k] = tot - fts[r * 4 + s];
            }
            dest[k++] = SHAPE;
        }
        if (k && deal(bits, owners, n, L->sp[s], (size_t)L->n_sp[s], counts, k, dest, OPEN) < 0)
            goto out;
        if (!L->n_shape) continue;
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < L->n_shape; j++) counts[r * L->n_shape + j] = LEN(r, L->shape_pat[j], s);
        if (!L->n_pooled) { /* without a pool the shape-only seats take any open cards of the suit */
            if (deal(bits, owners, n, suit, m, counts, L->n_shape, L->shape_seat, OPEN) < 0) goto out;
            continue;
        }
        /* 2. free honours for the shape-only seats, 3. split among them */
        int any = 0;
        for (size_t r = 0; r < n && !any; r++) any = fts[r * 4 + s] != 0;
        if (any) {
            int64_t *c1 = grab(S_C1, (n + 1) * sizeof *c1);
            if (!c1) {
                PyErr_NoMemory();
                goto out;
            }
            for (size_t r = 0; r < n; r++) c1[r] = fts[r * 4 + s];
            uint8_t d1 = SHAPE;
            int e = deal(bits, owners, n, L->tr[s], (size_t)L->n_tr[s], c1, 1, &d1, OPEN);
            drop(S_C1, c1);
            if (e < 0) goto out;
        }
        if (L->n_shape == 1) {
            for (size_t r = 0; r < n; r++)
                for (size_t c = 0; c < m; c++)
                    if (owners[r * NCARDS + suit[c]] == SHAPE) owners[r * NCARDS + suit[c]] = L->shape_seat[0];
        } else if (deal(bits, owners, n, suit, m, counts, L->n_shape, L->shape_seat, SHAPE) < 0) {
            goto out;
        }
    }
    /* 4. the pooled seats take their spot cards from the pool */
    for (int s = 0; s < 4; s++)
        for (int64_t t = 0; t < L->n_sp[s]; t++) all_spots[n_all_spots++] = L->sp[s][t];
    if (L->n_pooled) {
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < L->n_pooled; j++) {
                int64_t held = 0;
                for (int c = 0; c < NCARDS; c++) held += owners[r * NCARDS + c] == L->pooled[j];
                counts[r * L->n_pooled + j] = 13 - held;
            }
        if (deal(bits, owners, n, all_spots, n_all_spots, counts, L->n_pooled, L->pooled, OPEN) < 0) goto out;
    }
    /* 5. the unconstrained seats share the rest */
    if (L->n_free > 1) {
        for (int c = 0; c < NCARDS; c++) all[c] = c;
        int64_t need[4];
        for (size_t j = 0; j < L->n_free - 1; j++) {
            need[j] = 13;
            for (int c = 0; c < NCARDS; c++) need[j] -= L->dead[c] == L->free[j];
        }
        for (size_t r = 0; r < n * (L->n_free - 1); r++) counts[r] = need[r % (L->n_free - 1)];
        if (deal(bits, owners, n, all, NCARDS, counts, L->n_free - 1, L->free, OPEN) < 0) goto out;
    }
    if (L->n_free) {
        uint8_t last = L->free[L->n_free - 1];
        for (size_t c = 0; c < n * NCARDS; c++) owners[c] = owners[c] == OPEN ? last : owners[c];
    }
    rc = 0;
out:
    drop(S_COUNTS, counts);
    return rc;
#undef LEN
#undef MASK
}


/* How many rows ahead a loop over random rows of a large table asks for its lines. */
#define AHEAD 8

/* ------------------------------------------------------------ level 1 */

/* Most box and exact coordinates of a level-1 search (sampling._LEVEL1_BOX, _LEVEL1_EXACT). */
#define L1_BOX 16
#define L1_EXACT 7

/* Sums of a summed-area table over a box, along one axis.  With every axis
 * but d fixed to its range [qlo, qhi], the table's sum over the box with
 * axis d in [a, b] is line(b + 1) - line(a) (line(0) = 0: the zero slice),
 * where line(at) adds +-prefix[top + at * stride_d + off[j]] over the 2**m
 * corners of the other m axes whose low side is not the zero slice.  The
 * corners' offsets and signs are found once per row, so that each step of
 * the search along d costs 2**m reads and adds. */
typedef struct {
    int64_t top, step, *off; /* off and sign: room for 2**(nb - 1) corners, lent by the caller */
    int8_t *sign;
    int count;
} Line;

static inline void line_of(Line *L, const int64_t *stride, int nb, int64_t base, const int64_t *qlo, const int64_t *qhi,
                           int d) {
    L->top = base;
    L->step = stride[1 + d];
    L->off[0] = 0;
    L->sign[0] = 1;
    L->count = 1;
    for (int k = 0; k < nb; k++) {
        if (k == d) continue;
        L->top += (qhi[k] + 1) * stride[1 + k];
        if (qlo[k] <= 0) continue; /* its low side is the zero slice */
        int64_t low = (qlo[k] - qhi[k] - 1) * stride[1 + k];
        for (int j = 0; j < L->count; j++) {
            L->off[L->count + j] = L->off[j] + low;
            L->sign[L->count + j] = (int8_t)-L->sign[j];
        }
        L->count *= 2;
    }
}

static inline int64_t line_at(const int64_t *prefix, const Line *L, int64_t at) {
    if (at == 0) return 0;
    const int64_t *p = prefix + L->top + at * L->step;
    int64_t acc = 0;
    for (int j = 0; j < L->count; j++) acc += L->sign[j] * p[L->off[j]];
    return acc;
}


/* The line along axis d of one row's box: coordinates before d as chosen
 * (z2), the others over [lo, hi], at table `which` and exact coordinates ex. */
static inline void row_line(Line *L, const int64_t *stride, int nb, int ne, int64_t which, const int64_t *ex,
                            const int64_t *lo, const int64_t *hi, const int64_t *z2, int d) {
    int64_t qlo[L1_BOX], qhi[L1_BOX], base = which * stride[0];
    for (int e = 0; e < ne; e++) base += ex[e] * stride[1 + nb + e];
    for (int k = 0; k < nb; k++) {
        qlo[k] = k < d ? z2[k] : lo[k];
        qhi[k] = k < d ? z2[k] : hi[k];
    }
    line_of(L, stride, nb, base, qlo, qhi, d);
}

#define L1_LANES 8
/* Tables up to this many bytes are searched a row at a time. */
#define L1_NEAR ((size_t)1 << 20)

/* Ask for line(at)'s corners ahead of line_at: a row's reads of a table
 * past the caches then wait together with the other lanes' reads. */
static inline void line_prefetch(const int64_t *prefix, const Line *L, int64_t at) {
    if (at == 0) return;
    const int64_t *p = prefix + L->top + at * L->step;
    for (int j = 0; j < L->count; j++) __builtin_prefetch(p + L->off[j], 0, 1);
}

/* Coordinate 0's bound of rows r0 .. r0 + cnt - 1 (the table's sum over each
 * row's box) into bnd, and line(lo_0) into base. */
static void first_bounds(const int64_t *prefix, Line *L, const int64_t *stride, int nb, int ne, size_t r0, size_t cnt,
                         const int64_t *which, const int64_t *exact, const int64_t *lo, const int64_t *hi, int64_t *z2,
                         int64_t *base, int64_t *bnd) {
    for (size_t k = 0; k < cnt; k++) {
        size_t r = r0 + k;
        row_line(&L[k], stride, nb, ne, which[r], exact + r * ne, lo + r * nb, hi + r * nb, z2 + r * nb, 0);
        line_prefetch(prefix, &L[k], lo[r * nb]);
        line_prefetch(prefix, &L[k], hi[r * nb] + 1);
    }
    for (size_t k = 0; k < cnt; k++) {
        size_t r = r0 + k;
        base[r] = line_at(prefix, &L[k], lo[r * nb]);
        bnd[r] = line_at(prefix, &L[k], hi[r * nb] + 1) - base[r];
    }
}

/* A bisection of coordinate d for one row: the answer is in [a, b], whose
 * ends' lines are at_a = line(a) and at_b = line(b + 1); at_lo = line(lo_d). */
typedef struct {
    int64_t a, b, at_lo, at_a, at_b;
} Bisect;

/* Row r's bisection before its first step (its line L set). */
static inline Bisect bisect_of(const int64_t *prefix, const Line *L, int d, size_t r, int64_t a, int64_t b,
                               const int64_t *base, const int64_t *bnd) {
    int64_t at_lo = d ? line_at(prefix, L, a) : base[r];
    return (Bisect){a, b, at_lo, at_lo, at_lo + bnd[r]};
}

/* One halving toward the smallest x with line(x + 1) - line(lo_d) > draw. */
static inline void halve(const int64_t *prefix, const Line *L, Bisect *B, int64_t draw) {
    int64_t m = (B->a + B->b) / 2, v = line_at(prefix, L, m + 1);
    if (v - B->at_lo > draw)
        B->b = m, B->at_b = v;
    else
        B->a = m + 1, B->at_a = v;
}

/* Coordinate d of rows r0 .. r0 + cnt - 1 (cnt <= L1_LANES), the lanes
 * bisected in step.  bnd becomes the chosen slice's weight, line(a + 1) -
 * line(a), both read on the way (a one-value axis reads nothing: its slice
 * is the whole bound). */
static void search_lanes(const int64_t *prefix, Line *L, const int64_t *stride, int nb, int ne, int d, size_t r0,
                         size_t cnt, const int64_t *which, const int64_t *exact, const int64_t *lo, const int64_t *hi,
                         int64_t *z2, const int64_t *base, int64_t *bnd, const int64_t *draw) {
    Bisect B[L1_LANES];
    unsigned active = 0;
    for (size_t k = 0; k < cnt; k++) {
        size_t r = r0 + k;
        if (lo[r * nb + d] == hi[r * nb + d]) continue;
        active |= 1u << k;
        row_line(&L[k], stride, nb, ne, which[r], exact + r * ne, lo + r * nb, hi + r * nb, z2 + r * nb, d);
        if (d) line_prefetch(prefix, &L[k], lo[r * nb + d]);
    }
    for (size_t k = 0; k < cnt; k++)
        if (active >> k & 1) B[k] = bisect_of(prefix, &L[k], d, r0 + k, lo[(r0 + k) * nb + d], hi[(r0 + k) * nb + d], base, bnd);
    while (active) {
        for (size_t k = 0; k < cnt; k++)
            if (active >> k & 1) line_prefetch(prefix, &L[k], (B[k].a + B[k].b) / 2 + 1);
        for (size_t k = 0; k < cnt; k++) {
            if (!(active >> k & 1)) continue;
            halve(prefix, &L[k], &B[k], draw[r0 + k]);
            if (B[k].a == B[k].b) active &= ~(1u << k);
        }
    }
    for (size_t k = 0; k < cnt; k++) {
        size_t r = r0 + k;
        if (lo[r * nb + d] == hi[r * nb + d]) continue;
        z2[r * nb + d] = B[k].a;
        bnd[r] = B[k].at_b - B[k].at_a;
    }
}

/* search_lanes for row r alone, for a table in the caches (lanes would only
 * cost their bookkeeping there). */
static inline void search_row(const int64_t *prefix, Line *L, const int64_t *stride, int nb, int ne, int d, size_t r,
                              const int64_t *which, const int64_t *exact, const int64_t *lo, const int64_t *hi,
                              int64_t *z2, const int64_t *base, int64_t *bnd, const int64_t *draw) {
    if (lo[r * nb + d] == hi[r * nb + d]) return;
    row_line(L, stride, nb, ne, which[r], exact + r * ne, lo + r * nb, hi + r * nb, z2 + r * nb, d);
    Bisect B = bisect_of(prefix, L, d, r, lo[r * nb + d], hi[r * nb + d], base, bnd);
    while (B.a < B.b) halve(prefix, L, &B, draw[r]);
    z2[r * nb + d] = B.a;
    bnd[r] = B.at_b - B.at_a;
}

/* Sampler._level1 after the boxes: coordinate d of z2 takes x in [lo_d, hi_d]
 * with weight the table's sum over the rest of the box (coordinates < d as
 * chosen); one Rng.below call per coordinate for all rows, then the smallest
 * x whose cumulative weight exceeds the draw.  Returns 1 when done, 0 when
 * an index is out of range (nothing read: the caller runs the numpy code),
 * -1 on error.
 *
 * Coordinate d's bound is the weight of the slice chosen for d - 1, which
 * its bisection brackets, so only coordinate 0's bounds are read off the
 * table (the same bounds, the same draws). */
static int level1(PyObject *bits, const int64_t *prefix, const int64_t *shape, int nb, int ne, size_t n,
                  const int64_t *which, const int64_t *lo, const int64_t *hi, const int64_t *exact, int64_t *z2) {
    int ndim = 1 + nb + ne;
    int64_t stride[1 + L1_BOX + L1_EXACT];
    stride[ndim - 1] = 1;
    for (int a = ndim - 2; a >= 0; a--) stride[a] = stride[a + 1] * shape[a + 1];
    /* A box axis of one value may come unpadded (shape 1: no zero slice in
     * front), and its index is then 0 where a padded axis's is 1: a stride of
     * 0 reads it so in line_of and line_at alike, the same sums. */
    for (int d = 0; d < nb; d++)
        if (shape[1 + d] == 1) stride[1 + d] = 0;
    for (size_t r = 0; r < n; r++) {
        if (which[r] < 0 || which[r] >= shape[0]) return 0;
        for (int d = 0; d < nb; d++)
            if (lo[r * nb + d] < 0 || hi[r * nb + d] + (shape[1 + d] > 1) >= shape[1 + d] ||
                lo[r * nb + d] > hi[r * nb + d] + 1)
                return 0;
        for (int e = 0; e < ne; e++)
            if (exact[r * ne + e] < 0 || exact[r * ne + e] >= shape[1 + nb + e]) return 0;
    }
    /* bnd: each row's bound (then its chosen slice's weight); base: line(lo_0) */
    int64_t *bnd = grab(S_L1_BND, (2 * n + 1) * 8), *draw = grab(S_L1_DRAW, (n + 1) * 8), *base = bnd ? bnd + n : NULL;
    size_t corners = (size_t)1 << (nb - 1); /* heap, not stack: a thread's stack may be small */
    int64_t *off = malloc(L1_LANES * corners * sizeof *off);
    int8_t *sign = malloc(L1_LANES * corners);
    Line L[L1_LANES];
    int rc = -1;
    if (!bnd || !draw || !off || !sign) {
        PyErr_NoMemory();
        goto out;
    }
    for (int k = 0; k < L1_LANES; k++) L[k] = (Line){0, 0, off + k * corners, sign + k * corners, 0};
    size_t table = 8;
    for (int a = 0; a < ndim; a++) table *= (size_t)shape[a];
    size_t lanes = table > L1_NEAR ? L1_LANES : 1;
    memcpy(z2, lo, n * nb * sizeof *z2);
    Py_BEGIN_ALLOW_THREADS
    for (size_t r0 = 0; r0 < n; r0 += lanes)
        first_bounds(prefix, L, stride, nb, ne, r0, n - r0 < lanes ? n - r0 : lanes, which, exact, lo, hi, z2, base, bnd);
    Py_END_ALLOW_THREADS
    for (int d = 0; d < nb; d++) {
        if (below(bits, bnd, draw, n) < 0) goto out;
        Py_BEGIN_ALLOW_THREADS
        if (lanes == 1)
            for (size_t r = 0; r < n; r++) search_row(prefix, L, stride, nb, ne, d, r, which, exact, lo, hi, z2, base, bnd, draw);
        else
            for (size_t r0 = 0; r0 < n; r0 += lanes)
                search_lanes(prefix, L, stride, nb, ne, d, r0, n - r0 < lanes ? n - r0 : lanes, which, exact, lo, hi, z2,
                             base, bnd, draw);
        Py_END_ALLOW_THREADS
    }
    rc = 1;
out:
    drop(S_L1_BND, bnd);
    drop(S_L1_DRAW, draw);
    free(off);
    free(sign);
    return rc;
}

/* ------------------------------------------------------------ Python glue */


static PyObject *s_below(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer b, out;
    if (!PyArg_ParseTuple(args, "Oy*w*", &bits, &b, &out)) return NULL;
    size_t n, no;
    int rc = sized(&b, 8, &n, "below");
    if (!rc) rc = sized(&out, 8, &no, "below");
    if (!rc && n != no) {
        PyErr_SetString(PyExc_ValueError, "below: bounds and out differ in size");
        rc = -1;
    }
    if (!rc) rc = below(bits, b.buf, out.buf, n);
    PyBuffer_Release(&b);
    PyBuffer_Release(&out);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *s_below_wide(PyObject *self, PyObject *args) {
    PyObject *bits;
    long long top;
    unsigned long long low_max;
    int shift;
    Py_buffer hi, lo;
    if (!PyArg_ParseTuple(args, "OLKiw*w*", &bits, &top, &low_max, &shift, &hi, &lo)) return NULL;
    size_t n, n2;
    int rc = sized(&hi, 8, &n, "below_wide");
    if (!rc) rc = sized(&lo, 8, &n2, "below_wide");
    if (!rc && n != n2) {
        PyErr_SetString(PyExc_ValueError, "below_wide: hi and lo differ in size");
        rc = -1;
    }
    if (!rc) rc = below_wide(bits, top, low_max, shift, hi.buf, lo.buf, n);
    PyBuffer_Release(&hi);
    PyBuffer_Release(&lo);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* WideCategorical.draw: r = below_wide(...), then the first i whose
 * cumulative total exceeds r (high keys, then low bits on a tie). */
static PyObject *s_wide_locate(PyObject *self, PyObject *args) {
    PyObject *bits;
    long long top;
    unsigned long long low_max;
    int shift;
    Py_buffer ch, cl, out, gb;
    int gshift;
    if (!PyArg_ParseTuple(args, "OLKiy*y*w*y*i", &bits, &top, &low_max, &shift, &ch, &cl, &out, &gb, &gshift)) return NULL;
    size_t nc, nc2, n;
    int64_t *hi = NULL;
    uint64_t *lo = NULL;
    int rc = sized(&ch, 8, &nc, "wide_locate");
    if (!rc) rc = sized(&cl, 8, &nc2, "wide_locate");
    if (!rc) rc = sized(&out, 8, &n, "wide_locate");
    if (!rc && nc != nc2) {
        PyErr_SetString(PyExc_ValueError, "wide_locate: cum_hi and cum_lo differ in size");
        rc = -1;
    }
    if (!rc) {
        hi = grab(S_WL_HI, (n + 1) * 8);
        lo = grab(S_WL_LO, (n + 1) * 8);
        if (!hi || !lo) {
            PyErr_NoMemory();
            rc = -1;
        }
    }
    if (!rc) rc = below_wide(bits, top, low_max, shift, hi, lo, n);
    if (!rc) wide_search(ch.buf, cl.buf, nc, gb.buf, (size_t)gb.len / 8, gshift, hi, lo, n, out.buf);
    drop(S_WL_HI, hi);
    drop(S_WL_LO, lo);
    PyBuffer_Release(&ch);
    PyBuffer_Release(&cl);
    PyBuffer_Release(&out);
    PyBuffer_Release(&gb);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* Sampler._split / _option: within the run of `keys` equal to qkey[r], the
 * entry whose cumulative weight first exceeds base + below(total[r]). */
static PyObject *s_locate(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer kb, cb, qb, tb, ob, sb;
    if (!PyArg_ParseTuple(args, "Oy*y*y*y*w*y*", &bits, &kb, &cb, &qb, &tb, &ob, &sb)) return NULL;
    size_t nk, nc, n, nt, no, ns = (size_t)sb.len / 8;
    int64_t *r = NULL;
    int rc = sized(&kb, 8, &nk, "locate");
    if (!rc) rc = sized(&cb, 8, &nc, "locate");
    if (!rc) rc = sized(&qb, 8, &n, "locate");
    if (!rc) rc = sized(&tb, 8, &nt, "locate");
    if (!rc) rc = sized(&ob, 8, &no, "locate");
    if (!rc && (nk != nc || n != nt || n != no)) {
        PyErr_SetString(PyExc_ValueError, "locate: sizes differ");
        rc = -1;
    }
    if (!rc && !(r = grab(S_LOC_R, (n + 1) * 8))) {
        PyErr_NoMemory();
        rc = -1;
    }
    if (!rc) rc = below(bits, tb.buf, r, n);
    if (!rc) locate_rows(kb.buf, cb.buf, nc, sb.buf, ns, qb.buf, r, n, ob.buf);
    drop(S_LOC_R, r);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&qb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ob);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *s_deal(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer ob, cb, kb, db;
    int take;
    if (!PyArg_ParseTuple(args, "Ow*y*y*y*i", &bits, &ob, &cb, &kb, &db, &take)) return NULL;
    size_t n, m, nk, K = (size_t)db.len;
    int rc = sized(&ob, NCARDS, &n, "deal");
    if (!rc) rc = sized(&cb, 8, &m, "deal");
    if (!rc) rc = sized(&kb, 8, &nk, "deal");
    if (!rc && nk != n * K) {
        PyErr_SetString(PyExc_ValueError, "deal: counts must be (n, len(dest))");
        rc = -1;
    }
    if (!rc && m > NCARDS) {
        PyErr_SetString(PyExc_ValueError, "deal: at most 52 cards");
        rc = -1;
    }
    if (!rc) {
        const int64_t *cards = cb.buf;
        for (size_t c = 0; c < m && !rc; c++)
            if (cards[c] < 0 || cards[c] >= NCARDS) {
                PyErr_SetString(PyExc_ValueError, "deal: cards must be 0..51");
                rc = -1;
            }
    }
    if (!rc) rc = deal(bits, ob.buf, n, cb.buf, m, kb.buf, K, db.buf, (uint8_t)take);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&db);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* The roles tuple's buffers into L (0 on success; views to release after). */
static int roles_arrays(PyObject *roles, Roles *L, Py_buffer *views) {
    /* roles = (rank_seat u8, rank_pat i8, shape_seat u8, shape_pat i8, pooled u8, free u8, tracked i8 (4,13),
     * n_tracked i8 (4,), spots i8 (4,13), n_spots i8 (4,), dead u8 (52,)) */
    if (!PyTuple_Check(roles) || PyTuple_GET_SIZE(roles) != N_ROLES) {
        PyErr_SetString(PyExc_TypeError, "fill: roles must be an 11-tuple");
        return -1;
    }
    for (int i = 0; i < N_ROLES; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(roles, i), &views[i], PyBUF_C_CONTIGUOUS) < 0) {
            for (int j = 0; j < i; j++) PyBuffer_Release(&views[j]);
            return -1;
        }
    }
    L->rank_seat = views[0].buf;
    L->n_rank = (size_t)views[0].len;
    L->rank_pat = views[1].buf;
    L->shape_seat = views[2].buf;
    L->n_shape = (size_t)views[2].len;
    L->shape_pat = views[3].buf;
    L->pooled = views[4].buf;
    L->n_pooled = (size_t)views[4].len;
    L->free = views[5].buf;
    L->n_free = (size_t)views[5].len;
    int bad = views[1].len != 8 * views[0].len || views[3].len != 8 * views[2].len || views[6].len != 8 * 52 ||
              views[7].len != 32 || views[8].len != 8 * 52 || views[9].len != 32 || views[10].len != 52 || L->n_rank > 7 ||
              L->n_shape > 4 || L->n_free > 4 || L->n_pooled > 4;
    L->dead = views[10].buf;
    for (int c = 0; c < NCARDS && !bad; c++) {
        bad = L->dead[c] != OPEN;
        for (size_t j = 0; j < L->n_free && bad; j++) bad = L->dead[c] != L->free[j];
    }
    for (size_t i = 0; i < L->n_rank && !bad; i++) bad = L->rank_pat[i] >= (int64_t)L->n_pat;
    for (size_t i = 0; i < L->n_shape && !bad; i++) bad = L->shape_pat[i] < 0 || L->shape_pat[i] >= (int64_t)L->n_pat;
    const int64_t *tr = views[6].buf, *ntr = views[7].buf, *sp = views[8].buf, *nsp = views[9].buf;
    for (int s = 0; s < 4 && !bad; s++) {
        L->n_tr[s] = ntr[s];
        L->n_sp[s] = nsp[s];
        bad = ntr[s] < 0 || nsp[s] < 0 || ntr[s] + nsp[s] != 13;
        for (int t = 0; t < 13 && !bad; t++) {
            L->tr[s][t] = tr[s * 13 + t];
            L->sp[s][t] = sp[s * 13 + t];
            bad = L->tr[s][t] < 0 || L->tr[s][t] >= NCARDS || L->sp[s][t] < 0 || L->sp[s][t] >= NCARDS;
        }
    }
    if (bad) {
        for (int j = 0; j < N_ROLES; j++) PyBuffer_Release(&views[j]);
        PyErr_SetString(PyExc_ValueError, "fill: malformed roles");
        return -1;
    }
    return 0;
}

static PyObject *s_fill(PyObject *self, PyObject *args) {
    PyObject *bits, *roles;
    Py_buffer ob, lb, mb, fb, views[N_ROLES];
    Py_ssize_t n_pat;
    if (!PyArg_ParseTuple(args, "OOnw*y*y*y*", &bits, &roles, &n_pat, &ob, &lb, &mb, &fb)) return NULL;
    Roles L;
    L.n_pat = n_pat < 0 ? 0 : (size_t)n_pat;
    int rc = roles_arrays(roles, &L, views);
    int got_roles = rc == 0;
    size_t n = 0;
    if (!rc) rc = sized(&ob, NCARDS, &n, "fill");
    if (!rc && (lb.len != (Py_ssize_t)(n * L.n_pat * 32) || mb.len != (Py_ssize_t)(n * 8 * L.n_rank) ||
                fb.len != (Py_ssize_t)(n * 32))) {
        PyErr_SetString(PyExc_ValueError, "fill: lengths, masks or free_to_shape have the wrong size");
        rc = -1;
    }
    int8_t *len8 = NULL; /* the lengths as fill reads them */
    size_t n_len = n * L.n_pat * 4;
    if (!rc && !(len8 = grab(S_LEN8, n_len + 1))) rc = (PyErr_NoMemory(), -1);
    for (size_t j = 0; !rc && j < n_len; j++) {
        int64_t x = ((const int64_t *)lb.buf)[j];
        if (x < 0 || x > 13) rc = (PyErr_SetString(PyExc_ValueError, "fill: a suit length out of 0..13"), -1);
        len8[j] = (int8_t)x;
    }
    if (!rc) rc = fill(bits, ob.buf, n, &L, len8, mb.buf, fb.buf);
    drop(S_LEN8, len8);
    if (got_roles)
        for (int j = 0; j < N_ROLES; j++) PyBuffer_Release(&views[j]);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&mb);
    PyBuffer_Release(&fb);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *s_level1(PyObject *self, PyObject *args) {
    PyObject *bits;
    Py_buffer pb, sb, wb, lb, hb, eb, zb;
    int nb, ne;
    if (!PyArg_ParseTuple(args, "Oy*y*iiy*y*y*y*w*", &bits, &pb, &sb, &nb, &ne, &wb, &lb, &hb, &eb, &zb)) return NULL;
    size_t n = (size_t)wb.len / 8;
    int rc = 0;
    const int64_t *shape = sb.buf;
    int64_t cells = 1;
    if (nb < 1 || nb > L1_BOX || ne < 0 || ne > L1_EXACT || sb.len != 8 * (1 + nb + ne) || wb.len % 8 || lb.len != (Py_ssize_t)(8 * n * nb) ||
        hb.len != lb.len || zb.len != lb.len || eb.len != (Py_ssize_t)(8 * n * ne)) {
        PyErr_SetString(PyExc_ValueError, "level1: malformed arguments");
        rc = -1;
    }
    for (int a = 0; !rc && a < 1 + nb + ne; a++) cells *= shape[a] > 0 ? shape[a] : 0;
    if (!rc && pb.len != 8 * cells) {
        PyErr_SetString(PyExc_ValueError, "level1: the table does not have this shape");
        rc = -1;
    }
    if (!rc) rc = level1(bits, pb.buf, shape, nb, ne, n, wb.buf, lb.buf, hb.buf, eb.buf, zb.buf);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&zb);
    if (rc < 0) return NULL;
    return PyBool_FromLong(rc);
}

/* ------------------------------------------------------------ level 3 */

/* What level 3 and the fill read (OptionDraws, the cells' suit lengths).
 * Suit s of a row with cell c takes an option keyed by col * width + x, col
 * = cell_cols[c, s] and x the suit's vector: its flat index (Sampler), or
 * its place in the listing's VectorWeights (PairedSampler: a key space of
 * columns times the few hundred vectors some column reaches, where flat
 * indices span millions).  g[key] sums the weights of the key's run of the
 * option arrays (key, cum, masks, free), and start[key] is where that run
 * starts (n_start == 0: a binary search in key instead). */
typedef struct {
    const int64_t *cell_cols, *g, *key, *cum, *start, *free;
    const uint16_t *masks;  /* (n_opt, n_rank) */
    const int8_t *lengths; /* (n_cells, n_pat, 4) */
    size_t n_cells, n_cols, width, n_opt, n_start, n_pat, n_rank;
} Options;

/* OptionDraws.fill: each suit's option (one Rng.below per suit over all
 * rows, then the search in its key's run), then fill.fill_deals on the
 * options' masks and free honours and the cells' lengths.  bits is one
 * source, or a tuple of (bits, rows) parts, one per chunk: each chunk draws
 * from its own bits as a call with its rows alone would (its options' draws
 * suit by suit, then its fill). */
static int options_fill(PyObject *bits, const Options *O, const Roles *L, const int64_t *cell, const int64_t *x,
                        size_t n, uint8_t *owners) {
    size_t np4 = O->n_pat * 4, nr = O->n_rank;
    /* key, tot, r, at; the options (n, 4) and free honours (n, 4); then the masks (u16) and lengths (i8) */
    int64_t *key = grab(S_OPTS, n * (12 * 8 + 4 * nr * 2 + np4) + 8);
    if (!key) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t *tot = key + n, *r = tot + n, *at = r + n, *opt = at + n, *fts = opt + 4 * n;
    uint16_t *masks = (uint16_t *)(fts + 4 * n);
    int8_t *lengths = (int8_t *)(masks + 4 * n * nr);
    int rc = -1, malformed = 0;
    /* every suit's key first, into opt (each row's cell columns: one read of a table far larger than the caches) */
    for (size_t i = 0; i < n && !malformed; i++) {
        int64_t c = cell[i];
        if (i + AHEAD < n && cell[i + AHEAD] >= 0 && (size_t)cell[i + AHEAD] < O->n_cells)
            __builtin_prefetch(O->cell_cols + cell[i + AHEAD] * 4, 0, 0);
        malformed = c < 0 || (size_t)c >= O->n_cells;
        for (int s = 0; s < 4 && !malformed; s++) {
            int64_t col = O->cell_cols[c * 4 + s];
            malformed = col < 0 || (size_t)col >= O->n_cols || x[i * 4 + s] < 0 || (size_t)x[i * 4 + s] >= O->width;
            opt[i * 4 + s] = col * (int64_t)O->width + x[i * 4 + s];
        }
    }
    for (int s = 0; s < 4 && !malformed; s++) {
        for (size_t i = 0; i < n; i++) {
            key[i] = opt[i * 4 + s];
            tot[i] = O->g[key[i]];
        }
        if (by_parts(words64, 8, bits, tot, r, n) < 0) goto out;
        Py_BEGIN_ALLOW_THREADS
        locate_rows(O->key, O->cum, O->n_opt, O->start, O->n_start, key, r, n, at);
        Py_END_ALLOW_THREADS
        for (size_t i = 0; i < n; i++) {
            malformed |= (size_t)at[i] >= O->n_opt;
            opt[i * 4 + s] = malformed ? 0 : at[i];
        }
    }
    if (malformed) {
        PyErr_SetString(PyExc_ValueError, "options: an index out of range (malformed listing)");
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) { /* the fill's rows: every cell was checked above */
        if (i + AHEAD < n) { /* random rows of tables far larger than the caches */
            __builtin_prefetch(O->lengths + (size_t)cell[i + AHEAD] * np4, 0, 0);
            for (int s = 0; s < 4; s++) __builtin_prefetch(O->masks + (size_t)opt[(i + AHEAD) * 4 + s] * nr, 0, 0);
        }
        copy_small(lengths + i * np4, O->lengths + (size_t)cell[i] * np4, np4);
        for (int s = 0; s < 4; s++) {
            copy_small(masks + (i * 4 + s) * nr, O->masks + (size_t)opt[i * 4 + s] * nr, nr * 2);
            fts[i * 4 + s] = O->free[opt[i * 4 + s]];
        }
    }
    Py_END_ALLOW_THREADS
    if (!PyTuple_Check(bits)) {
        rc = fill(bits, owners, n, L, lengths, masks, fts);
        goto out;
    }
    /* each chunk's fill from its own bits, after its options' draws: as its own call would */
    size_t row = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(bits); k++) {
        PyObject *src;
        Py_ssize_t rows = part_of(bits, k, n - row, &src);
        if (rows < 0 ||
            fill(src, owners + row * NCARDS, (size_t)rows, L, lengths + row * np4, masks + row * 4 * nr, fts + row * 4) < 0)
            goto out;
        row += (size_t)rows;
    }
    rc = row == n ? 0 : (PyErr_SetString(PyExc_ValueError, "options_fill: the bits parts do not cover the rows"), -1);
out:
    drop(S_OPTS, key);
    return rc;
}

/* Rows options_fill takes together when its bits come in chunks: 8 chunks of 4,096. */
#define FILL_ROWS 32768

/* options_fill over consecutive chunks at a time, up to FILL_ROWS rows (a
 * chunk never split).  Each chunk's bytes are read in the same order as in
 * one call (its options suit by suit, then its fill), since each has its own
 * bits; the scratch stays within its slot instead of fresh pages that the
 * kernel zeroes at every call (64 chunks: 80 MB a call). */
static int options_fill_chunks(PyObject *bits, const Options *O, const Roles *L, const int64_t *cell, const int64_t *x,
                               size_t n, uint8_t *owners) {
    if (!PyTuple_Check(bits) || n <= FILL_ROWS) return options_fill(bits, O, L, cell, x, n, owners);
    Py_ssize_t parts = PyTuple_GET_SIZE(bits), k = 0;
    size_t row = 0;
    while (k < parts) {
        Py_ssize_t j = k;
        size_t rows = 0;
        for (; j < parts; j++) {
            PyObject *src;
            Py_ssize_t got = part_of(bits, j, n - row - rows, &src);
            if (got < 0) return -1;
            if (j > k && rows + (size_t)got > FILL_ROWS) break;
            rows += (size_t)got;
        }
        PyObject *some = PyTuple_GetSlice(bits, k, j);
        int rc = some ? options_fill(some, O, L, cell + row, x + row * 4, rows, owners + row * NCARDS) : -1;
        Py_XDECREF(some);
        if (rc < 0) return -1;
        row += rows;
        k = j;
    }
    return row == n ? 0 : (PyErr_SetString(PyExc_ValueError, "options_fill: the bits parts do not cover the rows"), -1);
}

/* ------------------------------------------------------------ one call */

/* The listing's arrays that Sampler.draw reads, in the order of the tuple
 * that truedeal.sampling.Sampler._kernel_arrays builds: int64 unless said. */
enum {
    A_CUM_HI, A_CUM_LO /* u64 */, A_GUIDE, A_E_CELL, A_E_Z1, A_E_C, A_C_VALUES, A_DIMS, A_CLAMP, A_CELL_DC, A_BOX_LO,
    A_BOX_HI, A_PREFIX, A_PREFIX_SHAPE, A_CELL_COLS, A_CELL_PAIRS, A_PAIR_TABLES, A_SPLIT_KEY, A_SPLIT_CUM,
    A_SPLIT_START, A_SPLIT_VA, A_SPLIT_VB, A_G, A_OPT_KEY, A_OPT_CUM, A_OPT_START, A_OPT_MASKS /* u16 */, A_OPT_FREE,
    A_CELL_LENGTHS, N_ARRAYS
};

typedef struct {
    const void *p[N_ARRAYS];
    size_t len[N_ARRAYS]; /* items (8 bytes, or 2 for the masks) */
    size_t nb, ne, ndims, zsize, n_pat, n_rank;
} Tables;

#define I64(T, a) ((const int64_t *)(T)->p[a])

/* Split each pair vector z[r] of pair pair[r] into va, vb (Sampler._split):
 * one Rng.below on the pair tables' totals, then the run's search. */
static int split_rows(PyObject *bits, const Tables *T, const int64_t *pair, const int64_t *z, size_t n, int64_t *key,
                      int64_t *tot, int64_t *r, int64_t *at, int64_t *va, int64_t *vb) {
    size_t n_pairs = T->len[A_PAIR_TABLES] / T->zsize, n_split = T->len[A_SPLIT_KEY];
    for (size_t i = 0; i < n; i++) {
        if (pair[i] < 0 || (size_t)pair[i] >= n_pairs || z[i] < 0 || (size_t)z[i] >= T->zsize) goto bad;
        size_t ahead = i + AHEAD < n ? i + AHEAD : i; /* random rows of tables past the caches */
        if ((size_t)pair[ahead] < n_pairs && (size_t)z[ahead] < T->zsize)
            __builtin_prefetch(I64(T, A_PAIR_TABLES) + pair[ahead] * (int64_t)T->zsize + z[ahead], 0, 0);
        key[i] = pair[i] * (int64_t)T->zsize + z[i];
        tot[i] = I64(T, A_PAIR_TABLES)[key[i]];
    }
    if (below(bits, tot, r, n) < 0) return -1;
    Py_BEGIN_ALLOW_THREADS
    locate_rows(I64(T, A_SPLIT_KEY), I64(T, A_SPLIT_CUM), n_split, I64(T, A_SPLIT_START), T->len[A_SPLIT_START], key, r,
                n, at);
    Py_END_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        if ((size_t)at[i] >= n_split) goto bad;
        va[i] = I64(T, A_SPLIT_VA)[at[i]];
        vb[i] = I64(T, A_SPLIT_VB)[at[i]];
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "draw: a split out of range (malformed listing)");
    return -1;
}

/* Row r's feature vector z1, exact coordinates, table and box (Sampler._level1
 * before its draws).  0, or -1 for an index out of range. */
static int level1_row(const Tables *T, int64_t e, int64_t *z1, int64_t *exact, int64_t *which, int64_t *lo, int64_t *hi) {
    const int64_t *dims = I64(T, A_DIMS), *clamp = I64(T, A_CLAMP);
    size_t n_cells = T->len[A_CELL_DC], n_c = T->ne ? T->len[A_C_VALUES] / T->ne : 0;
    int64_t cell = I64(T, A_E_CELL)[e], zi = I64(T, A_E_Z1)[e], c = I64(T, A_E_C)[e];
    if (cell < 0 || (size_t)cell >= n_cells || zi < 0 || (size_t)zi >= T->zsize || (T->ne && (c < 0 || (size_t)c >= n_c)))
        return -1;
    for (size_t d = T->ndims; d-- > 0;) { /* numpy.unravel_index */
        z1[d] = zi % dims[d];
        zi /= dims[d];
    }
    for (size_t j = 0; j < T->ne; j++) exact[j] = I64(T, A_C_VALUES)[(size_t)c * T->ne + j] - z1[T->nb + j];
    *which = I64(T, A_CELL_DC)[cell];
    for (size_t d = 0; d < T->nb; d++) {
        int64_t blo = I64(T, A_BOX_LO)[(size_t)cell * T->nb + d], bhi = I64(T, A_BOX_HI)[(size_t)cell * T->nb + d];
        if (bhi == (clamp[d] ? dims[d] - 1 : -1)) bhi = 1000000000; /* Layout.open_top */
        lo[d] = blo - z1[d] > 0 ? blo - z1[d] : 0;
        hi[d] = bhi - z1[d] < dims[d] - 1 ? bhi - z1[d] : dims[d] - 1;
    }
    return 0;
}

/* Sampler.draw, every step in one call: the same draws from the same bytes
 * in the same order as its numpy steps (each a Rng call over all rows), for
 * a listing whose cells have one box each and whose level 1 the compiled
 * search takes.  Nothing here is new arithmetic: the steps are the ones the
 * module's other functions make, and the Python between them (gathers,
 * unravelling) is done here instead. */
static int draw_rows(PyObject *bits, const Tables *T, const Roles *L, int64_t top, uint64_t low_max, int shift,
                     int gshift, uint8_t *owners, size_t n) {
    size_t nb = T->nb, ne = T->ne;
    /* 13 row arrays, the rows' vectors, 3 of 4 per row, lo_w */
    int64_t *arena = grab(S_ARENA, n * (14 + T->ndims + ne + 3 * nb + 4) * 8);
    if (!arena) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = -1;
    int64_t *entry = arena, *hi_w = entry + n, *cell = hi_w + n, *which = cell + n, *z1f = which + n, *z2f = z1f + n, *key = z2f + n,
            *tot = key + n, *r = tot + n, *at = r + n, *va = at + n, *vb = va + n, *q = vb + n, *z1 = q + n,
            *exact = z1 + n * T->ndims, *lo = exact + n * ne, *hi = lo + n * nb, *z2 = hi + n * nb, *v = z2 + n * nb;
    uint64_t *lo_w = (uint64_t *)(v + n * 4);
    const int64_t *dims = I64(T, A_DIMS);
    int64_t stride[L1_BOX + L1_EXACT + 1];
    for (size_t d = T->ndims; d-- > 0;) stride[d] = d + 1 == T->ndims ? 1 : stride[d + 1] * dims[d + 1];
    /* level 0 */
    if (below_wide(bits, top, low_max, shift, hi_w, lo_w, n) < 0) goto out;
    int malformed = 0;
    Py_BEGIN_ALLOW_THREADS
    wide_search(I64(T, A_CUM_HI), T->p[A_CUM_LO], T->len[A_CUM_HI], I64(T, A_GUIDE), T->len[A_GUIDE], gshift, hi_w, lo_w,
                n, entry);
    for (size_t i = 0; i < n && !malformed; i++) { /* level 1's rows */
        if (i + AHEAD < n && (size_t)entry[i + AHEAD] < T->len[A_E_CELL]) { /* random rows of tables past the caches */
            __builtin_prefetch(I64(T, A_E_CELL) + entry[i + AHEAD], 0, 0);
            __builtin_prefetch(I64(T, A_E_Z1) + entry[i + AHEAD], 0, 0);
            __builtin_prefetch(I64(T, A_E_C) + entry[i + AHEAD], 0, 0);
        }
        malformed = (size_t)entry[i] >= T->len[A_E_CELL] ||
                    level1_row(T, entry[i], z1 + i * T->ndims, exact + i * ne, which + i, lo + i * nb, hi + i * nb) < 0;
        cell[i] = malformed ? 0 : I64(T, A_E_CELL)[entry[i]];
        for (size_t d = 0; d < nb; d++) z2[i * nb + d] = lo[i * nb + d];
    }
    Py_END_ALLOW_THREADS
    if (malformed) goto bad;
    if (nb) {
        int got = level1(bits, T->p[A_PREFIX], I64(T, A_PREFIX_SHAPE), (int)nb, (int)ne, n, which, lo, hi, exact, z2);
        if (got < 0) goto out;
        if (got == 0) goto bad;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t f = 0;
        for (size_t d = 0; d < nb; d++) f += z2[i * nb + d] * stride[d];
        for (size_t j = 0; j < ne; j++) f += exact[i * ne + j] * stride[nb + j];
        z2f[i] = f;
    }
    /* level 2: spades+hearts from z1, diamonds+clubs from z2 */
    size_t n_cells = T->len[A_CELL_DC];
    if (T->len[A_CELL_PAIRS] != 2 * n_cells || T->len[A_CELL_COLS] != 4 * n_cells) goto bad;
    for (size_t i = 0; i < n; i++) {
        q[i] = I64(T, A_CELL_PAIRS)[cell[i] * 2];
        z1f[i] = I64(T, A_E_Z1)[entry[i]];
    }
    if (split_rows(bits, T, q, z1f, n, key, tot, r, at, va, vb) < 0) goto out;
    for (size_t i = 0; i < n; i++) v[i * 4] = va[i], v[i * 4 + 1] = vb[i];
    for (size_t i = 0; i < n; i++) q[i] = I64(T, A_CELL_PAIRS)[cell[i] * 2 + 1];
    if (split_rows(bits, T, q, z2f, n, key, tot, r, at, va, vb) < 0) goto out;
    for (size_t i = 0; i < n; i++) v[i * 4 + 2] = va[i], v[i * 4 + 3] = vb[i];
    /* level 3: each suit's option, keyed by its flat vector; the fill */
    Options O = {I64(T, A_CELL_COLS), I64(T, A_G), I64(T, A_OPT_KEY), I64(T, A_OPT_CUM), I64(T, A_OPT_START),
                 I64(T, A_OPT_FREE), T->p[A_OPT_MASKS], T->p[A_CELL_LENGTHS], n_cells, T->len[A_G] / T->zsize, T->zsize,
                 T->len[A_OPT_KEY], T->len[A_OPT_START], T->n_pat, T->n_rank};
    rc = options_fill(bits, &O, L, cell, v, n, owners);
    goto out;
bad:
    PyErr_SetString(PyExc_ValueError, "draw: an index out of range (malformed listing)");
out:
    drop(S_ARENA, arena);
    return rc;
}

/* The arrays tuple's buffers into T (0 on success; views to release after). */
static int tables_of(PyObject *arrays, size_t nb, size_t n_pat, size_t n_rank, Tables *T, Py_buffer *views) {
    if (!PyTuple_Check(arrays) || PyTuple_GET_SIZE(arrays) != N_ARRAYS) {
        PyErr_SetString(PyExc_TypeError, "draw: arrays must be a tuple of the listing's arrays");
        return -1;
    }
    int got = 0, bad = 0;
    for (; got < N_ARRAYS; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(arrays, got), &views[got], PyBUF_C_CONTIGUOUS) < 0) break;
        size_t item = got == A_OPT_MASKS ? 2 : got == A_CELL_LENGTHS ? 1 : 8;
        T->p[got] = views[got].buf;
        T->len[got] = (size_t)views[got].len / item;
        bad |= views[got].len % (Py_ssize_t)item != 0;
    }
    if (got < N_ARRAYS) {
        for (int j = 0; j < got; j++) PyBuffer_Release(&views[j]);
        return -1;
    }
    const int64_t *dims = T->p[A_DIMS];
    T->nb = nb;
    T->ndims = T->len[A_DIMS];
    T->ne = T->ndims >= nb ? T->ndims - nb : 0;
    T->n_pat = n_pat;
    T->n_rank = n_rank;
    T->zsize = 1;
    for (size_t d = 0; d < T->ndims && !bad; d++) {
        bad = dims[d] < 1 || dims[d] > (1 << 20);
        T->zsize *= (size_t)dims[d];
    }
    size_t n_cells = T->len[A_CELL_DC], n_opt = T->len[A_OPT_KEY], prefix = 1;
    bad = bad || nb > L1_BOX || T->ndims < nb || T->ne > L1_EXACT || T->zsize > ((size_t)1 << 40) ||
          T->len[A_CLAMP] != nb || T->len[A_CUM_LO] != T->len[A_CUM_HI] || T->len[A_E_Z1] != T->len[A_E_CELL] ||
          T->len[A_E_C] != T->len[A_E_CELL] || (T->ne && T->len[A_C_VALUES] % T->ne) ||
          T->len[A_BOX_LO] != n_cells * nb || T->len[A_BOX_HI] != n_cells * nb || T->len[A_PAIR_TABLES] % T->zsize ||
          T->len[A_G] % T->zsize || T->len[A_SPLIT_CUM] != T->len[A_SPLIT_KEY] ||
          T->len[A_SPLIT_VA] != T->len[A_SPLIT_KEY] || T->len[A_SPLIT_VB] != T->len[A_SPLIT_KEY] ||
          T->len[A_OPT_CUM] != n_opt || T->len[A_OPT_FREE] != n_opt || T->len[A_OPT_MASKS] != n_opt * n_rank ||
          T->len[A_CELL_LENGTHS] != n_cells * n_pat * 4;
    if (!bad && nb) { /* level 1's summed-area tables: (tables, dims + 1 ..., exact dims ...) */
        const int64_t *shape = T->p[A_PREFIX_SHAPE];
        bad = T->len[A_PREFIX_SHAPE] != 1 + T->ndims;
        for (size_t a = 0; a < 1 + T->ndims && !bad; a++) {
            bad = shape[a] < 1;
            prefix *= (size_t)shape[a];
        }
        bad = bad || prefix != T->len[A_PREFIX];
    }
    if (bad) {
        for (int j = 0; j < N_ARRAYS; j++) PyBuffer_Release(&views[j]);
        PyErr_SetString(PyExc_ValueError, "draw: malformed listing arrays");
        return -1;
    }
    return 0;
}

static PyObject *s_draw(PyObject *self, PyObject *args) {
    PyObject *bits, *roles, *arrays;
    long long top;
    unsigned long long low_max;
    int shift, gshift;
    Py_ssize_t nb, n_pat;
    Py_buffer ob, rviews[N_ROLES], tviews[N_ARRAYS];
    if (!PyArg_ParseTuple(args, "OLKiinOnOw*", &bits, &top, &low_max, &shift, &gshift, &nb, &roles, &n_pat, &arrays, &ob))
        return NULL;
    Roles L;
    Tables T;
    L.n_pat = n_pat < 0 ? 0 : (size_t)n_pat;
    int rc = nb < 0 ? (PyErr_SetString(PyExc_ValueError, "draw: nb < 0"), -1) : 0;
    int got_roles = 0, got_tables = 0;
    if (!rc) got_roles = (rc = roles_arrays(roles, &L, rviews)) == 0;
    if (!rc) got_tables = (rc = tables_of(arrays, (size_t)nb, L.n_pat, L.n_rank, &T, tviews)) == 0;
    size_t n = 0;
    if (!rc) rc = sized(&ob, NCARDS, &n, "draw");
    if (!rc && n) rc = draw_rows(bits, &T, &L, top, low_max, shift, gshift, ob.buf, n);
    if (got_roles)
        for (int j = 0; j < N_ROLES; j++) PyBuffer_Release(&rviews[j]);
    if (got_tables)
        for (int j = 0; j < N_ARRAYS; j++) PyBuffer_Release(&tviews[j]);
    PyBuffer_Release(&ob);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* The option arrays of options_fill, in this order (int64 unless said). */
enum { O_CELL_COLS, O_G, O_KEY, O_CUM, O_START, O_FREE, O_MASKS /* u16 */, O_LENGTHS /* i1 */, N_OPTION_ARRAYS };

static PyObject *s_options_fill(PyObject *self, PyObject *args) {
    PyObject *bits, *roles, *arrays;
    Py_ssize_t n_pat, width;
    Py_buffer ob, cb, xb, rviews[N_ROLES], views[N_OPTION_ARRAYS];
    if (!PyArg_ParseTuple(args, "OOnw*y*y*nO", &bits, &roles, &n_pat, &ob, &cb, &xb, &width, &arrays)) return NULL;
    Roles L;
    L.n_pat = n_pat < 0 ? 0 : (size_t)n_pat;
    int rc = roles_arrays(roles, &L, rviews), got = 0;
    int got_roles = rc == 0;
    if (!rc && (!PyTuple_Check(arrays) || PyTuple_GET_SIZE(arrays) != N_OPTION_ARRAYS))
        rc = (PyErr_SetString(PyExc_TypeError, "options_fill: arrays must be a tuple of the option arrays"), -1);
    for (; !rc && got < N_OPTION_ARRAYS; got++)
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(arrays, got), &views[got], PyBUF_C_CONTIGUOUS) < 0) rc = -1;
    if (rc && got) got--; /* the view that failed holds nothing */
    size_t n = 0, len[N_OPTION_ARRAYS];
    for (int j = 0; !rc && j < N_OPTION_ARRAYS; j++) rc = sized(&views[j], j == O_MASKS ? 2 : j == O_LENGTHS ? 1 : 8, &len[j], "options_fill");
    if (!rc) rc = sized(&ob, NCARDS, &n, "options_fill");
    Options O;
    if (!rc) {
        O = (Options){views[O_CELL_COLS].buf, views[O_G].buf, views[O_KEY].buf, views[O_CUM].buf, views[O_START].buf,
                      views[O_FREE].buf, views[O_MASKS].buf, views[O_LENGTHS].buf, len[O_CELL_COLS] / 4,
                      width > 0 ? len[O_G] / (size_t)width : 0, width > 0 ? (size_t)width : 0, len[O_KEY],
                      len[O_START], L.n_pat, L.n_rank};
        if (width < 1 || len[O_G] % (size_t)width || len[O_CELL_COLS] % 4 || len[O_CUM] != O.n_opt ||
            len[O_FREE] != O.n_opt || len[O_MASKS] != O.n_opt * O.n_rank || len[O_LENGTHS] != O.n_cells * O.n_pat * 4 ||
            (O.n_start && O.n_start != len[O_G] + 1) || (size_t)cb.len != 8 * n || (size_t)xb.len != 32 * n)
            rc = (PyErr_SetString(PyExc_ValueError, "options_fill: malformed arrays"), -1);
    }
    if (!rc) rc = options_fill_chunks(bits, &O, &L, cb.buf, xb.buf, n, ob.buf);
    if (got_roles)
        for (int j = 0; j < N_ROLES; j++) PyBuffer_Release(&rviews[j]);
    for (int j = 0; j < got; j++) PyBuffer_Release(&views[j]);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&xb);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"below", s_below, METH_VARARGS, "below(bits, bounds i8, out i8): Rng.below, same bytes."},
    {"below_wide", s_below_wide, METH_VARARGS, "below_wide(bits, top, low_max, shift, hi i8, lo u8): Rng.below_wide."},
    {"wide_locate", s_wide_locate, METH_VARARGS,
     "wide_locate(bits, top, low_max, shift, cum_hi i8, cum_lo u8, out i8, guide i8, guide_shift): WideCategorical.draw;"
     " guide[b] = first index whose high key is >= b << guide_shift (empty: search it all)."},
    {"locate", s_locate, METH_VARARGS, "locate(bits, keys, cum, qkey, total, out, starts): Sampler._split/_option's search; starts[k] = first index of key k (or empty)."},
    {"deal", s_deal, METH_VARARGS, "deal(bits, owners u8 (n,52), cards i8, counts i8 (n,K), dest u8 (K,), take): fill._deal."},
    {"level1", s_level1, METH_VARARGS,
     "level1(bits, prefix, shape, nb, ne, which, lo, hi, exact, z2 out) -> bool: Sampler._level1's coordinates (False: not handled)."},
    {"fill", s_fill, METH_VARARGS,
     "fill(bits, roles, n_pat, owners u8 (n,52), lengths i8 (n,n_pat,4), masks u16 (n,4,n_rank), free_to_shape i8 (n,4)): fill.fill_deals."},
    {"options_fill", s_options_fill, METH_VARARGS,
     "options_fill(bits, roles, n_pat, owners u8 (n,52), cell i8 (n,), x i8 (n,4), width, arrays): OptionDraws.fill,"
     " each suit keyed by col * width + x; arrays = (cell_cols, g, key, cum, start, free, masks u16, lengths i1)."},
    {"draw", s_draw, METH_VARARGS,
     "draw(bits, top, low_max, shift, guide_shift, nb, roles, n_pat, arrays, owners u8 (n,52)): Sampler.draw in one call."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_sampler", "truedeal compiled sampler", -1, methods};

PyMODINIT_FUNC PyInit__sampler(void) {
    fill_set_tables();
    return PyModule_Create(&moddef);
}
