/* truedeal._kernel: compiled batch kernels for deal numbers and deal text.
 *
 * The reference implementations are the numpy paths in truedeal/dealnumber.py
 * and truedeal/kernel.py; every function here must give byte-identical
 * results (tests/test_kernel.py checks it).  The Python wrapper
 * (truedeal/kernel.py) validates shapes and dtypes and passes C-contiguous
 * buffers, so this file only sees raw memory:
 *
 *   encode(owners: bytes-like n*52 uint8, out: writable n*2 uint64) -> None
 *   decode(limbs: bytes-like n*2 uint64, out: writable n*52 uint8) -> None
 *   format_numbers(limbs: bytes-like n*2 uint64) -> bytes
 *   pbn_deal_strings(owners, first: int 0..3 or bytes-like n uint8) -> bytes
 *   first_non_deal(owners: bytes-like n*52 uint8) -> int (-1: all are deals)
 *   below_d(words: bytes-like m*12, out: writable m*2 uint64) -> int kept
 *   number_bytes(limbs: bytes-like n*2 uint64) -> bytes (12 big-endian bytes each)
 *   pbn_games(owners, b0, limbs|None, head, players, middles, tail, nl) -> bytes
 *
 * A deal number I (0 <= I < D < 2**96) is the lexicographic rank of the word
 * owners[0..51] among words with 13 of each seat (Pavlicek 7Z68).  With the
 * remaining counts r = (n, e, s, w) as state index r0 + 14 r1 + 196 r2 + 2744 r3,
 * K(r) = (sum r)! / prod(r_j!) and the offset of seat j is
 * O(r, j) = sum_{i<j, r_i>0} K(r - e_i); encode adds O(r, seat) card by card,
 * decode takes the seat as the number of thresholds O(r, 1..3) <= I and
 * subtracts its offset.  All arithmetic is exact (D < 2**96).  The last TAIL
 * cards go through a table of every TAIL-letter word, grouped by state and in
 * lexicographic order within a state, so a tail's contribution to I is its
 * position within its group.  Decode also takes the first HEAD cards in one
 * look-up (the start state is fixed), and until every K < 2**64 compares
 * only I >> 32 (a tie is redone exactly); see the decode section.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

#define NCARDS 52
#define NSTATES 38416 /* 14**4 */
#define S0 38415      /* state (13, 13, 13, 13) */
#define TAIL 8        /* cards resolved by the tail table */
#define NTAIL 65536   /* 4**TAIL words */

/* 14**j for j = 0..3, packed in 16-bit fields: avoids a memory load on the
 * state's dependency chain (the state update is then pure ALU work). */
#define POW14_PACKED ((uint64_t)1 | (uint64_t)14 << 16 | (uint64_t)196 << 32 | (uint64_t)2744 << 48)
#define POW14(j) ((unsigned)((POW14_PACKED >> ((j) << 4)) & 0xFFFF))
static const unsigned POW14T[4] = {1, 14, 196, 2744}; /* the same, off the chain: j is known early */

static u128 K[NSTATES];
static u128 OFF[4 * NSTATES];      /* OFF[4 s + j] = O(r, j) */
static uint64_t OFF64[4 * NSTATES]; /* the same, valid where K(s) < 2**64 */
static uint32_t TBASE[NSTATES];    /* first index of state s in TWORD */
static uint16_t TWORD[NTAIL];      /* tail words grouped by state */
static uint16_t TRANK[NTAIL];      /* word -> its rank within its state */
static u128 DEALS;                 /* D */
static int P1_END;                 /* first card after which every K < 2**64 */

static inline int state_sum(int s) { return s % 14 + s / 14 % 14 + s / 196 % 14 + s / 2744; }

static void build_tables(void) {
    /* K by the recurrence K(r) = sum_{r_j > 0} K(r - e_j), K(0) = 1: each
     * predecessor has a smaller index, so one pass in index order suffices. */
    int minsum_big = NCARDS;
    for (int s = 0; s < NSTATES; s++) {
        int r[4] = {s % 14, s / 14 % 14, s / 196 % 14, s / 2744};
        u128 acc = 0, k = 0;
        for (int j = 0; j < 4; j++) {
            OFF[4 * s + j] = acc;
            if (r[j]) {
                acc += K[s - POW14(j)];
            }
        }
        k = s ? acc : 1;
        K[s] = k;
        if (k >> 64) {
            int c = state_sum(s);
            if (c < minsum_big) minsum_big = c;
        }
        for (int j = 0; j < 4; j++) OFF64[4 * s + j] = (uint64_t)OFF[4 * s + j];
    }
    DEALS = K[S0];
    /* card c starts from a state with 52 - c cards left: 128 bits are needed
     * while 52 - c >= minsum_big */
    P1_END = NCARDS - minsum_big + 1;
    /* Tail words: counting sort of all 4**TAIL words by state, stable, so
     * numeric (= lexicographic) order is kept within each state. */
    static uint16_t wstate[NTAIL];
    static uint32_t count[NSTATES];
    memset(count, 0, sizeof count);
    for (uint32_t w = 0; w < NTAIL; w++) {
        unsigned s = 0;
        for (int i = 0; i < TAIL; i++) s += POW14((w >> (2 * i)) & 3);
        wstate[w] = (uint16_t)s;
        count[s]++;
    }
    uint32_t acc = 0;
    for (int s = 0; s < NSTATES; s++) {
        TBASE[s] = acc;
        acc += count[s];
    }
    memset(count, 0, sizeof count);
    for (uint32_t w = 0; w < NTAIL; w++) {
        unsigned s = wstate[w];
        uint32_t pos = TBASE[s] + count[s]++;
        TWORD[pos] = (uint16_t)w;
        TRANK[w] = (uint16_t)(pos - TBASE[s]);
    }
}

/* ------------------------------------------------------------------ encode */

#ifdef __SSE2__
#include <emmintrin.h>
/* Cards of seat v in the row's four loads (d holds 4 cards: mask m4).  SSE2
 * only: a match is -1 in its byte lane, lanes sum to at most 4, and one
 * sum-of-absolute-differences adds the lanes (no popcount instruction,
 * which the baseline x86-64 target lacks and libgcc would emulate). */
static inline int count_eq(__m128i a, __m128i b, __m128i c, __m128i d, __m128i m4, int v) {
    __m128i x = _mm_set1_epi8((char)v);
    __m128i s = _mm_add_epi8(_mm_add_epi8(_mm_cmpeq_epi8(a, x), _mm_cmpeq_epi8(b, x)),
                             _mm_add_epi8(_mm_cmpeq_epi8(c, x), _mm_and_si128(_mm_cmpeq_epi8(d, x), m4)));
    __m128i t = _mm_sad_epu8(_mm_sub_epi8(_mm_setzero_si128(), s), _mm_setzero_si128());
    return _mm_cvtsi128_si32(t) + _mm_extract_epi16(t, 4);
}

/* 1 if the row is a deal: 52 seats 0..3, 13 each.  Three 16-byte loads and
 * the last four bytes; 13 cards of each seat 0..3 leave no room for others. */
static inline int is_deal(const uint8_t *row) {
    __m128i a = _mm_loadu_si128((const __m128i *)row);
    __m128i b = _mm_loadu_si128((const __m128i *)(row + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(row + 32));
    uint32_t tail4;
    memcpy(&tail4, row + 48, 4);
    __m128i d = _mm_cvtsi32_si128((int)tail4);
    __m128i m4 = _mm_cvtsi32_si128(-1);
    return count_eq(a, b, c, d, m4, 0) == 13 && count_eq(a, b, c, d, m4, 1) == 13 &&
           count_eq(a, b, c, d, m4, 2) == 13 && count_eq(a, b, c, d, m4, 3) == 13;
}
#else
/* 1 if the row is a deal: 52 seats 0..3, 13 each (four byte-wide counters) */
static inline int is_deal(const uint8_t *row) {
    uint32_t cnt = 0;
    unsigned any = 0;
    for (int c = 0; c < NCARDS; c++) {
        any |= row[c];
        cnt += 1u << (8 * (row[c] & 3));
    }
    return any <= 3 && cnt == 0x0D0D0D0Du;
}
#endif

/* Number of a valid deal (see is_deal).  Offsets of the first P1_END cards
 * may need 128 bits; the later ones sum to less than K(state at P1_END),
 * which is < 2**64. */
static inline u128 encode_one(const uint8_t *row) {
    unsigned s = S0;
    u128 acc = 0;
    uint64_t acc64 = 0;
    unsigned word = 0;
    int c = 0;
    for (; c < P1_END; c++) {
        unsigned j = row[c];
        acc += OFF[4 * s + j];
        s -= POW14T[j];
    }
    for (; c < NCARDS - TAIL; c++) {
        unsigned j = row[c];
        acc64 += OFF64[4 * s + j];
        s -= POW14T[j];
    }
    for (; c < NCARDS; c++) word = word << 2 | row[c];
    return acc + acc64 + TRANK[word];
}

/* encode_one of ENC_LANES consecutive rows at once: their state chains are
 * independent, so the table look-ups of one row overlap the others' (one
 * row's chain is a load and a subtraction per card, mostly latency): 19 ->
 * 22.5M deals/s here with 4 (8: 21M). */
#define ENC_LANES 4
static inline void encode_lanes(const uint8_t *rows, uint64_t *out) {
    unsigned s[ENC_LANES];
    u128 acc[ENC_LANES];
    uint64_t acc64[ENC_LANES];
    unsigned word[ENC_LANES];
    for (int k = 0; k < ENC_LANES; k++) {
        s[k] = S0;
        acc[k] = 0;
        acc64[k] = 0;
        word[k] = 0;
    }
    int c = 0;
    for (; c < P1_END; c++) {
        for (int k = 0; k < ENC_LANES; k++) {
            unsigned j = rows[k * NCARDS + c];
            acc[k] += OFF[4 * s[k] + j];
            s[k] -= POW14T[j];
        }
    }
    for (; c < NCARDS - TAIL; c++) {
        for (int k = 0; k < ENC_LANES; k++) {
            unsigned j = rows[k * NCARDS + c];
            acc64[k] += OFF64[4 * s[k] + j];
            s[k] -= POW14T[j];
        }
    }
    for (; c < NCARDS; c++)
        for (int k = 0; k < ENC_LANES; k++) word[k] = word[k] << 2 | rows[k * NCARDS + c];
    for (int k = 0; k < ENC_LANES; k++) {
        u128 v = acc[k] + acc64[k] + TRANK[word[k]];
        out[2 * k] = (uint64_t)(v >> 64);
        out[2 * k + 1] = (uint64_t)v;
    }
}

static PyObject *k_encode(PyObject *self, PyObject *args) {
    Py_buffer src, dst;
    if (!PyArg_ParseTuple(args, "y*w*", &src, &dst)) return NULL;
    Py_ssize_t n = src.len / NCARDS;
    PyObject *result = Py_None;
    if (src.len % NCARDS || dst.len != n * 16) {
        PyErr_SetString(PyExc_ValueError, "encode: buffer sizes do not match");
        result = NULL;
    } else {
        const uint8_t *in = src.buf;
        uint64_t *out = dst.buf;
        Py_ssize_t bad = -1;
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t d = 0;
        for (; d + ENC_LANES <= n && bad < 0; d += ENC_LANES) {
            for (int k = 0; k < ENC_LANES; k++) {
                if (!is_deal(in + (d + k) * NCARDS)) {
                    bad = d + k;
                    break;
                }
            }
            if (bad < 0) encode_lanes(in + d * NCARDS, out + 2 * d);
        }
        for (; d < n && bad < 0; d++) {
            if (!is_deal(in + d * NCARDS)) {
                bad = d;
                break;
            }
            u128 v = encode_one(in + d * NCARDS);
            out[2 * d] = (uint64_t)(v >> 64);
            out[2 * d + 1] = (uint64_t)v;
        }
        Py_END_ALLOW_THREADS
        if (bad >= 0) {
            PyErr_Format(PyExc_ValueError, "deal %zd: each seat must hold 13 cards (seats 0..3)", bad);
            result = NULL;
        }
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    Py_XINCREF(result);
    return result;
}

/* ------------------------------------------------------------------ decode */

/* Decode of a number I, in three parts (see the header comment):
 *   head  the first HEAD cards from the start state in one look-up.  The
 *         first numbers HP[w] of the 4**HEAD prefixes w increase and every
 *         prefix block is at least 2**HB_SHIFT wide, so the bucket
 *         I >> HB_SHIFT names the prefix holding the bucket's lowest number,
 *         and the prefix of I is that one or the next (one compare);
 *   walk  card by card while more than TAIL cards remain, LANES numbers in
 *         lock-step (independent chains overlap): before card P1_END on the
 *         R96 rows (below), then on OFF64 in 64 bits, from card P2_END (all
 *         K < 2**32) on OFF32 in 32 bits;
 *   tail  one look-up in TWORD.
 * Each of head, walk96, walk64 and walk32 (with the tail) runs over a chunk
 * of up to CHUNK numbers before the next one starts, so that its tables
 * stay in cache (measured: 1.3x over all parts in turn on every LANES
 * numbers; walk32's 16-byte rows, half of OFF64's, another 1.1x).  A step
 * moves a row pointer (or offset) by a per-seat byte offset: no index
 * arithmetic on the dependency chain.
 *
 * R96: before P1_END (I < K < 2**84 after the head) I is held as top =
 * I >> 32 in 64 bits and, in v, its low 32 bits above the byte offset of
 * the state's row; a row holds O(r, j) >> 32 and (O(r, j) mod 2**32) << 32
 * | the offset back to the row of r - e_j, so a threshold costs one 64-bit
 * compare and a step one sub (low half and row together, whose borrow is
 * the low half's) and one sbb.  The seat is the number of tops <= top:
 * never too small, one too large only when a threshold's top equals I's
 * (I less than 2**32 below it: rare).  Then I - O is below zero: it wraps
 * to at least 2**96 - 2**32 and stays above 2**95 whatever follows
 * (thresholds < 2**84), while a right walk ends below 2**63, so a top
 * >= 2**32 at the end sends the lanes through walk_exact.  An empty seat's
 * row offset is 0: a wrong walk stays in the table.
 */
#define HEAD 6        /* cards resolved by the head table (its output below assumes 6) */
#define NHEAD 4096    /* 4**HEAD prefixes, all valid */
#define HB_SHIFT 81   /* 2**81 <= the smallest prefix block (checked at import) */
#define NBUCKET 22187 /* ((D - 1) >> HB_SHIFT) + 1 (checked at import) */
#define LANES 8       /* numbers walked in lock-step (measured best of 4..16) */
#define CHUNK 16384   /* numbers per chunk at most, a multiple of LANES */

typedef struct {
    uint64_t top[4];  /* O(r, j) >> 32 */
    uint64_t down[4]; /* (O(r, j) mod 2**32) << 32 | bytes back to the row of r - e_j (0 if r_j = 0) */
} row96;

typedef struct { /* a chunk's numbers between the parts */
    u128 *rest;        /* after the head */
    uint64_t *rest64;  /* after walk96 */
    uint16_t *state;   /* after the head */
    uint16_t *state64; /* after walk96 */
} scratch;

static u128 HP[NHEAD + 1];        /* first number of prefix w; HP[NHEAD] = D */
static uint16_t HSTATE[NHEAD];    /* state after prefix w */
static uint16_t HBUCKET[NBUCKET]; /* prefix holding number b << HB_SHIFT */
static row96 R96[NSTATES] __attribute__((aligned(64))); /* a row a cache line */
static uint8_t SPREAD[256][4];    /* byte -> its four 2-bit fields, high first */
static uint32_t OFF32[4 * NSTATES] __attribute__((aligned(64))); /* OFF64 where K < 2**32 */
static int P2_END;                /* first card after which every K < 2**32 */
static const size_t NEXT64[4] = {32 * 1, 32 * 14, 32 * 196, 32 * 2744}; /* OFF64 rows back */
static const size_t NEXT32[4] = {16 * 1, 16 * 14, 16 * 196, 16 * 2744}; /* OFF32 rows back */

/* After build_tables; -1 if a constant above does not match D. */
static int build_decode_tables(void) {
    u128 smallest = ~(u128)0;
    for (unsigned w = 0; w < NHEAD; w++) {
        unsigned s = S0;
        u128 acc = 0;
        for (int i = 0; i < HEAD; i++) {
            unsigned j = (w >> (2 * (HEAD - 1 - i))) & 3;
            acc += OFF[4 * s + j];
            s -= POW14T[j];
        }
        HP[w] = acc;
        HSTATE[w] = (uint16_t)s;
        if (K[s] < smallest) smallest = K[s];
    }
    HP[NHEAD] = DEALS;
    int minsum32 = NCARDS; /* as P1_END */
    for (int s = 0; s < NSTATES; s++)
        if (K[s] >> 32 && state_sum(s) < minsum32) minsum32 = state_sum(s);
    P2_END = NCARDS - minsum32 + 1;
    if (!(smallest >> HB_SHIFT) || ((DEALS - 1) >> HB_SHIFT) + 1 != NBUCKET || P1_END <= HEAD ||
        P2_END <= P1_END || P2_END > NCARDS - TAIL)
        return -1;
    for (unsigned b = 0, w = 0; b < NBUCKET; b++) {
        while (HP[w + 1] <= (u128)b << HB_SHIFT) w++;
        HBUCKET[b] = (uint16_t)w;
    }
    for (int s = 0; s < NSTATES; s++) {
        int r[4] = {s % 14, s / 14 % 14, s / 196 % 14, s / 2744}, left = state_sum(s);
        /* the rows walk96 steps from: a walk, right or wrong, loses a card
         * a step or stays */
        if (left > NCARDS - P1_END && left <= NCARDS - HEAD) {
            for (int j = 0; j < 4; j++) {
                R96[s].top[j] = (uint64_t)(OFF[4 * s + j] >> 32);
                R96[s].down[j] = (uint64_t)(uint32_t)OFF[4 * s + j] << 32 | (r[j] ? sizeof(row96) * POW14T[j] : 0);
            }
        }
        if (left > TAIL && left <= NCARDS - P2_END)
            for (int j = 0; j < 4; j++) OFF32[4 * s + j] = (uint32_t)OFF64[4 * s + j];
        /* a tail state's row is never stepped from: its slot 0 (else
         * O(r, 0) = 0) holds TBASE */
        if (left == TAIL) OFF32[4 * s] = TBASE[s];
    }
    for (int x = 0; x < 256; x++)
        for (int i = 0; i < 4; i++) SPREAD[x][i] = (uint8_t)(x >> (6 - 2 * i) & 3);
    return 0;
}

/* Cards HEAD..P1_END - 1 of one number exactly on OFF (walk96's fallback):
 * returns the state after them, *rest the number left. */
static __attribute__((noinline)) unsigned walk_exact(u128 i, unsigned s, uint8_t *out, uint64_t *rest) {
    for (int c = HEAD; c < P1_END; c++) {
        const u128 *o = OFF + 4 * s;
        unsigned j = (i >= o[1]) + (i >= o[2]) + (i >= o[3]);
        i -= o[j];
        s -= POW14T[j];
        out[c] = (uint8_t)j;
    }
    *rest = (uint64_t)i;
    return s;
}

/* Cards HEAD..P1_END - 1 of LANES numbers: rest[k] (< K(state[k])) and
 * state[k] in, what is left and the state after them out. */
static inline void walk96(const u128 *rest, const uint16_t *state, uint8_t *out, uint64_t *rest64,
                          uint16_t *state64) {
    uint64_t top[LANES], v[LANES], wrapped = 0;
    const char *base = (const char *)R96;
    for (int k = 0; k < LANES; k++) {
        top[k] = (uint64_t)(rest[k] >> 32);
        v[k] = (uint64_t)(uint32_t)rest[k] << 32 | state[k] * sizeof(row96);
    }
    /* a pointer per card, not out[k * NCARDS + c]: -fwrapv keeps int
     * offsets out of the addressing mode */
    for (uint8_t *oc = out + HEAD, *end = out + P1_END; oc < end; oc++) {
        for (int k = 0; k < LANES; k++) {
            const row96 *o = (const row96 *)(base + (uint32_t)v[k]);
            uint64_t t = top[k], nv;
            size_t j = (size_t)(o->top[1] <= t) + (o->top[2] <= t) + (o->top[3] <= t);
            uint64_t borrow = __builtin_sub_overflow(v[k], o->down[j], &nv); /* sub */
            v[k] = nv;
            top[k] = t - o->top[j] - borrow; /* sbb */
            oc[k * NCARDS] = (uint8_t)j;
        }
    }
    for (int k = 0; k < LANES; k++) wrapped |= top[k];
    for (int k = 0; k < LANES; k++) {
        if (wrapped >> 32) {
            state64[k] = (uint16_t)walk_exact(rest[k], state[k], out + k * NCARDS, &rest64[k]);
        } else {
            state64[k] = (uint16_t)((uint32_t)v[k] / sizeof(row96));
            rest64[k] = top[k] << 32 | v[k] >> 32;
        }
    }
}

/* Cards P1_END..P2_END - 1 of LANES numbers: rest64[k] and state64[k] (from
 * walk96) in, what is left and the state after them out. */
static inline void walk64(uint64_t *rest64, uint16_t *state64, uint8_t *out) {
    uint64_t rest[LANES];
    const char *row[LANES];
    for (int k = 0; k < LANES; k++) {
        rest[k] = rest64[k];
        row[k] = (const char *)(OFF64 + 4 * state64[k]);
    }
    for (uint8_t *oc = out + P1_END, *end = out + P2_END; oc < end; oc++) {
        for (int k = 0; k < LANES; k++) {
            const uint64_t *o = (const uint64_t *)row[k];
            uint64_t i = rest[k];
            size_t j = (size_t)(i >= o[1]) + (i >= o[2]) + (i >= o[3]);
            rest[k] = i - o[j];
            row[k] -= NEXT64[j];
            oc[k * NCARDS] = (uint8_t)j;
        }
    }
    for (int k = 0; k < LANES; k++) {
        rest64[k] = rest[k];
        state64[k] = (uint16_t)(((const uint64_t *)row[k] - OFF64) / 4);
    }
}

/* Cards P2_END..NCARDS - 1 of LANES numbers (walk64's results in). */
static inline void walk32(const uint64_t *rest64, const uint16_t *state64, uint8_t *out) {
    uint32_t rest[LANES];
    const char *row[LANES];
    for (int k = 0; k < LANES; k++) {
        rest[k] = (uint32_t)rest64[k];
        row[k] = (const char *)(OFF32 + 4 * state64[k]);
    }
    for (uint8_t *oc = out + P2_END, *end = out + NCARDS - TAIL; oc < end; oc++) {
        for (int k = 0; k < LANES; k++) {
            const uint32_t *o = (const uint32_t *)row[k];
            uint32_t i = rest[k];
            size_t j = (size_t)(i >= o[1]) + (i >= o[2]) + (i >= o[3]);
            rest[k] = i - o[j];
            row[k] -= NEXT32[j];
            oc[k * NCARDS] = (uint8_t)j;
        }
    }
    for (int k = 0; k < LANES; k++) {
        unsigned w = TWORD[*(const uint32_t *)row[k] + rest[k]]; /* slot 0: TBASE */
        memcpy(out + k * NCARDS + NCARDS - 8, SPREAD[w >> 8], 4);
        memcpy(out + k * NCARDS + NCARDS - 4, SPREAD[w & 255], 4);
    }
}

/* m numbers (a multiple of LANES, at most sc's size), all below D. */
static void decode_chunk(const uint64_t *limbs, uint8_t *out, size_t m, const scratch *sc) {
    for (size_t d = 0; d < m; d++) {
        uint64_t hi = limbs[2 * d];
        u128 i = (u128)hi << 64 | limbs[2 * d + 1];
        unsigned w = HBUCKET[hi >> (HB_SHIFT - 64)];
        w += i >= HP[w + 1];
        sc->rest[d] = i - HP[w];
        sc->state[d] = HSTATE[w];
        memcpy(out + d * NCARDS, SPREAD[w >> 4], 4);            /* cards 0..3 */
        memcpy(out + d * NCARDS + 4, SPREAD[(w & 15) << 4], 4); /* 4, 5 (6, 7 come later) */
    }
    for (size_t d = 0; d < m; d += LANES)
        walk96(sc->rest + d, sc->state + d, out + d * NCARDS, sc->rest64 + d, sc->state64 + d);
    for (size_t d = 0; d < m; d += LANES) walk64(sc->rest64 + d, sc->state64 + d, out + d * NCARDS);
    for (size_t d = 0; d < m; d += LANES) walk32(sc->rest64 + d, sc->state64 + d, out + d * NCARDS);
}

static PyObject *k_decode(PyObject *self, PyObject *args) {
    Py_buffer src, dst;
    if (!PyArg_ParseTuple(args, "y*w*", &src, &dst)) return NULL;
    Py_ssize_t n = src.len / 16;
    PyObject *result = Py_None;
    size_t cap = (size_t)n < CHUNK ? ((size_t)n + LANES - 1) / LANES * LANES : CHUNK;
    void *mem = NULL;
    scratch sc;
    if (src.len % 16 || dst.len != n * NCARDS) {
        PyErr_SetString(PyExc_ValueError, "decode: buffer sizes do not match");
        result = NULL;
    } else if (n && !(mem = PyMem_RawMalloc(cap * (sizeof(u128) + sizeof(uint64_t) + 2 * sizeof(uint16_t))))) {
        PyErr_NoMemory();
        result = NULL;
    } else {
        sc.rest = mem;
        sc.rest64 = (uint64_t *)(sc.rest + cap);
        sc.state = (uint16_t *)(sc.rest64 + cap);
        sc.state64 = sc.state + cap;
        const uint64_t *in = src.buf;
        Py_ssize_t bad = -1;
        for (Py_ssize_t d = 0; d < n; d++) { /* all numbers < D before any work */
            if (((u128)in[2 * d] << 64 | in[2 * d + 1]) >= DEALS) {
                bad = d;
                break;
            }
        }
        if (bad >= 0) {
            PyErr_Format(PyExc_ValueError, "deal number (row %zd) out of range [0, D)", bad);
            result = NULL;
        } else {
            uint8_t *out = dst.buf;
            Py_BEGIN_ALLOW_THREADS
            size_t whole = (size_t)n / LANES * LANES;
            for (size_t d = 0; d < whole; d += CHUNK)
                decode_chunk(in + 2 * d, out + d * NCARDS, whole - d < CHUNK ? whole - d : CHUNK, &sc);
            if (whole < (size_t)n) { /* the last few, padded with zeros (0 is a deal number) */
                uint64_t pad[2 * LANES] = {0};
                uint8_t tmp[LANES * NCARDS];
                size_t m = (size_t)n - whole;
                memcpy(pad, in + 2 * whole, m * 16);
                decode_chunk(pad, tmp, LANES, &sc);
                memcpy(out + whole * NCARDS, tmp, m * NCARDS);
            }
            Py_END_ALLOW_THREADS
        }
    }
    PyMem_RawFree(mem);
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    Py_XINCREF(result);
    return result;
}

/* ------------------------------------------------------------------ numbers */

static const char DIGITS2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* exactly 9 digits of v < 10**9, zero-padded */
static inline char *put9(char *p, uint32_t v) {
    p[0] = '0' + v / 100000000;
    v %= 100000000;
    for (int i = 7; i > 0; i -= 2) {
        memcpy(p + i, DIGITS2 + 2 * (v % 100), 2);
        v /= 100;
    }
    return p + 9;
}

/* v < 10**9 without leading zeros (v may be 0: writes "0") */
static inline char *put_short(char *p, uint32_t v) {
    char tmp[9];
    put9(tmp, v);
    int i = 0;
    while (i < 8 && tmp[i] == '0') i++;
    memcpy(p, tmp + i, 9 - i);
    return p + 9 - i;
}

/* Decimal of hi * 2**64 + lo (< 2**96): three 32-bit limbs divided by 10**9
 * repeatedly (each step a 64-by-constant division, i.e. a multiplication). */
static char *put_number(char *p, uint64_t hi, uint64_t lo) {
    uint32_t limb[3] = {(uint32_t)hi, (uint32_t)(lo >> 32), (uint32_t)lo};
    uint32_t group[4];
    int ng = 0;
    do {
        uint64_t r = 0;
        for (int i = 0; i < 3; i++) {
            uint64_t cur = r << 32 | limb[i];
            limb[i] = (uint32_t)(cur / 1000000000u);
            r = cur % 1000000000u;
        }
        group[ng++] = (uint32_t)r;
    } while (limb[0] | limb[1] | limb[2]);
    p = put_short(p, group[--ng]);
    while (ng) p = put9(p, group[--ng]);
    return p;
}

/* The one argument, limbs of numbers below D: its rows (n of them), or NULL
 * with ValueError naming `what` (src is then released). */
static const uint64_t *limbs_arg(PyObject *args, const char *what, Py_buffer *src, Py_ssize_t *n) {
    if (!PyArg_ParseTuple(args, "y*", src)) return NULL;
    if (src->len % 16) {
        PyBuffer_Release(src);
        PyErr_Format(PyExc_ValueError, "%s: buffer size is not a multiple of 16", what);
        return NULL;
    }
    const uint64_t *in = src->buf;
    *n = src->len / 16;
    for (Py_ssize_t d = 0; d < *n; d++) {
        if (((u128)in[2 * d] << 64 | in[2 * d + 1]) >= DEALS) {
            PyBuffer_Release(src);
            PyErr_Format(PyExc_ValueError, "deal number (row %zd) out of range [0, D)", d);
            return NULL;
        }
    }
    static const uint64_t none[2];
    return *n ? in : none; /* never NULL: that means an error */
}

/* 12 big-endian bytes per number (truedeal.dealnumber.limbs_to_bytes). */
static PyObject *k_number_bytes(PyObject *self, PyObject *args) {
    Py_buffer src;
    Py_ssize_t n;
    const uint64_t *in = limbs_arg(args, "number_bytes", &src, &n);
    if (!in) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 12);
    if (out) {
        uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t d = 0; d < n; d++, p += 12) {
            for (int k = 0; k < 4; k++) p[k] = (uint8_t)(in[2 * d] >> (24 - 8 * k));
            for (int k = 0; k < 8; k++) p[4 + k] = (uint8_t)(in[2 * d + 1] >> (56 - 8 * k));
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&src);
    return out;
}

static PyObject *k_format_numbers(PyObject *self, PyObject *args) {
    Py_buffer src;
    Py_ssize_t n;
    const uint64_t *in = limbs_arg(args, "format_numbers", &src, &n);
    if (!in) return NULL;
    /* at most 29 digits (D < 10**29) and a newline */
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 30);
    if (out) {
        char *p = PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t d = 0; d < n; d++) {
            p = put_number(p, in[2 * d], in[2 * d + 1]);
            *p++ = '\n';
        }
        Py_END_ALLOW_THREADS
        _PyBytes_Resize(&out, p - PyBytes_AS_STRING(out));
    }
    PyBuffer_Release(&src);
    return out;
}

/* ------------------------------------------------------------------ PBN */

#define PBN_LEN 70 /* "N:" + 4 hands of 13 ranks and 3 dots + 3 spaces + "\n" */

static const char RANK_CHARS[] = "AKQJT98765432";
static const char SEAT_CHARS[] = "NESW";

/* One PBN Deal value plus "\n", hands clockwise from seat `first`.  Each hand
 * segment is 16 bytes (13 ranks, 3 dots), so only the dots move: ranks are
 * written at positions computed from the suit lengths, highest rank first
 * because cards are numbered rank-major from the ace. */
static inline int pbn_one(const uint8_t *row, unsigned first, char *p) {
    int len[4][4] = {{0}};
    for (int c = 0; c < NCARDS; c++) {
        if (row[c] > 3) return -1;
        len[row[c]][c & 3]++;
    }
    for (int seat = 0; seat < 4; seat++) /* before writing: the layout assumes 13 */
        if (len[seat][0] + len[seat][1] + len[seat][2] + len[seat][3] != 13) return -1;
    int pos[4][4];
    p[0] = SEAT_CHARS[first];
    p[1] = ':';
    for (unsigned h = 0; h < 4; h++) {
        unsigned seat = (first + h) & 3;
        int at = 2 + 17 * h;
        for (int su = 0; su < 4; su++) {
            pos[seat][su] = at;
            at += len[seat][su];
            if (su < 3) p[at++] = '.';
        }
        if (h < 3) p[at] = ' ';
    }
    for (int c = 0; c < NCARDS; c++) p[pos[row[c]][c & 3]++] = RANK_CHARS[c >> 2];
    p[PBN_LEN - 1] = '\n';
    return 0;
}

static PyObject *k_pbn_deal_strings(PyObject *self, PyObject *args) {
    Py_buffer src, firsts = {0};
    PyObject *first_obj;
    if (!PyArg_ParseTuple(args, "y*O", &src, &first_obj)) return NULL;
    PyObject *out = NULL;
    long first = -1;
    Py_ssize_t n = src.len / NCARDS;
    if (PyLong_Check(first_obj)) {
        first = PyLong_AsLong(first_obj);
        if (first < 0 || first > 3) {
            PyErr_SetString(PyExc_ValueError, "first seat must be 0..3");
            goto done;
        }
    } else if (PyObject_GetBuffer(first_obj, &firsts, PyBUF_SIMPLE) < 0) {
        goto done;
    } else if (firsts.len != n) {
        PyErr_SetString(PyExc_ValueError, "pbn_deal_strings: one first seat per deal");
        goto done;
    }
    if (src.len % NCARDS) {
        PyErr_SetString(PyExc_ValueError, "pbn_deal_strings: buffer size is not a multiple of 52");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * PBN_LEN);
    if (!out) goto done;
    const uint8_t *in = src.buf;
    const uint8_t *fs = firsts.buf;
    char *p = PyBytes_AS_STRING(out);
    Py_ssize_t bad = -1;
    for (Py_ssize_t d = 0; d < n; d++) {
        unsigned f = first >= 0 ? (unsigned)first : fs[d];
        if (f > 3 || pbn_one(in + d * NCARDS, f, p + d * PBN_LEN)) {
            bad = d;
            break;
        }
    }
    if (bad >= 0) {
        Py_CLEAR(out);
        PyErr_Format(PyExc_ValueError, "deal %zd: not a deal (seats 0..3, 13 cards each) or bad first seat", bad);
    }
done:
    PyBuffer_Release(&src);
    if (firsts.obj) PyBuffer_Release(&firsts);
    return out;
}

/* pbn_games(owners, b0, limbs or None, head, players, middles, tail, nl, dealers) -> bytes
 *
 * PBN games of boards b0, b0 + 1, ...: for each, head + board + players +
 * middles[(board - 1) % 16] + the Deal value from the board's dealer
 * (dealers[(board - 1) % 16], 16 bytes of seats) + tail, then [DealNumber "<number>"] + nl when limbs are
 * given, then nl.  The pieces are the writer's (truedeal/formats/pbnfile.py),
 * which checks that the result equals its Python form. */
static PyObject *k_pbn_games(PyObject *self, PyObject *args) {
    Py_buffer src, head, players, tail, nl, dealers, lb = {0};
    unsigned long long b0;
    PyObject *limbs_obj, *middles, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*KOy*y*Oy*y*y*", &src, &b0, &limbs_obj, &head, &players, &middles, &tail, &nl, &dealers))
        return NULL;
    Py_ssize_t n = src.len / NCARDS, maxmid = 0;
    const uint64_t *limbs = NULL;
    const uint8_t *dealer_of = dealers.buf;
    if (src.len % NCARDS || b0 < 1 || b0 + (unsigned long long)n >= (1ull << 63)) {
        PyErr_SetString(PyExc_ValueError, "pbn_games: bad owners buffer or board numbers");
        goto done;
    }
    if (dealers.len != 16) {
        PyErr_SetString(PyExc_ValueError, "pbn_games: dealers must be 16 seats");
        goto done;
    }
    for (int i = 0; i < 16; i++)
        if (dealer_of[i] > 3) {
            PyErr_SetString(PyExc_ValueError, "pbn_games: dealers must be seats 0..3");
            goto done;
        }
    if (!PyTuple_Check(middles) || PyTuple_GET_SIZE(middles) != 16) {
        PyErr_SetString(PyExc_TypeError, "pbn_games: middles must be 16 bytes objects");
        goto done;
    }
    for (int i = 0; i < 16; i++) {
        PyObject *m = PyTuple_GET_ITEM(middles, i);
        if (!PyBytes_Check(m)) {
            PyErr_SetString(PyExc_TypeError, "pbn_games: middles must be 16 bytes objects");
            goto done;
        }
        if (PyBytes_GET_SIZE(m) > maxmid) maxmid = PyBytes_GET_SIZE(m);
    }
    if (limbs_obj != Py_None) {
        if (PyObject_GetBuffer(limbs_obj, &lb, PyBUF_SIMPLE) < 0) goto done;
        if (lb.len != n * 16) {
            PyErr_SetString(PyExc_ValueError, "pbn_games: one [hi, lo] pair per deal");
            goto done;
        }
        limbs = lb.buf;
        for (Py_ssize_t d = 0; d < n; d++)
            if (((u128)limbs[2 * d] << 64 | limbs[2 * d + 1]) >= DEALS) {
                PyErr_Format(PyExc_ValueError, "deal number (row %zd) out of range [0, D)", d);
                goto done;
            }
    }
    static const char NUM_OPEN[] = "[DealNumber \"", NUM_CLOSE[] = "\"]";
    Py_ssize_t per = head.len + 20 + players.len + maxmid + PBN_LEN + tail.len + nl.len +
                     (limbs ? (Py_ssize_t)sizeof NUM_OPEN + 30 + (Py_ssize_t)sizeof NUM_CLOSE + nl.len : 0);
    out = PyBytes_FromStringAndSize(NULL, n * per);
    if (!out) goto done;
    char *p = PyBytes_AS_STRING(out), deal[PBN_LEN];
    const uint8_t *in = src.buf;
    for (Py_ssize_t d = 0; d < n; d++) {
        unsigned long long b = b0 + (unsigned long long)d;
        if (pbn_one(in + d * NCARDS, dealer_of[(b - 1) % 16], deal)) {
            Py_CLEAR(out);
            PyErr_Format(PyExc_ValueError, "deal %zd: not a deal (seats 0..3, 13 cards each)", d);
            goto done;
        }
        PyObject *m = PyTuple_GET_ITEM(middles, (b - 1) % 16);
        memcpy(p, head.buf, head.len), p += head.len;
        p = put_number(p, 0, b); /* sprintf's parsing was 12% of the PBN writer */
        memcpy(p, players.buf, players.len), p += players.len;
        memcpy(p, PyBytes_AS_STRING(m), PyBytes_GET_SIZE(m)), p += PyBytes_GET_SIZE(m);
        memcpy(p, deal, PBN_LEN - 1), p += PBN_LEN - 1; /* without its newline */
        memcpy(p, tail.buf, tail.len), p += tail.len;
        if (limbs) {
            memcpy(p, NUM_OPEN, sizeof NUM_OPEN - 1), p += sizeof NUM_OPEN - 1;
            p = put_number(p, limbs[2 * d], limbs[2 * d + 1]);
            memcpy(p, NUM_CLOSE, sizeof NUM_CLOSE - 1), p += sizeof NUM_CLOSE - 1;
            memcpy(p, nl.buf, nl.len), p += nl.len;
        }
        memcpy(p, nl.buf, nl.len), p += nl.len;
    }
    _PyBytes_Resize(&out, p - PyBytes_AS_STRING(out));
done:
    PyBuffer_Release(&src);
    PyBuffer_Release(&head);
    PyBuffer_Release(&players);
    PyBuffer_Release(&tail);
    PyBuffer_Release(&nl);
    PyBuffer_Release(&dealers);
    if (lb.obj) PyBuffer_Release(&lb);
    return out;
}

/* ------------------------------------------------------------------ checks */

/* first_non_deal(owners_buf) -> the first row that is not a deal, or -1. */
static PyObject *k_first_non_deal(PyObject *self, PyObject *args) {
    Py_buffer src;
    if (!PyArg_ParseTuple(args, "y*", &src)) return NULL;
    if (src.len % NCARDS) {
        PyBuffer_Release(&src);
        PyErr_SetString(PyExc_ValueError, "first_non_deal: buffer size is not a multiple of 52");
        return NULL;
    }
    Py_ssize_t n = src.len / NCARDS, bad = -1;
    const uint8_t *in = src.buf;
    for (Py_ssize_t d = 0; d < n; d++)
        if (!is_deal(in + d * NCARDS)) {
            bad = d;
            break;
        }
    PyBuffer_Release(&src);
    return PyLong_FromSsize_t(bad);
}

/* Stream v2's deals (truedeal/every_deal.py): the 12-byte big-endian words
 * below D, in order, as [hi, lo] limbs into out; returns how many. */
static PyObject *k_below_d(PyObject *self, PyObject *args) {
    Py_buffer src, dst;
    if (!PyArg_ParseTuple(args, "y*w*", &src, &dst)) return NULL;
    Py_ssize_t m = src.len / 12, kept = 0;
    if (src.len % 12 || dst.len < m * 16) {
        PyBuffer_Release(&src);
        PyBuffer_Release(&dst);
        PyErr_SetString(PyExc_ValueError, "below_d: words must be 12 bytes each and out hold 16 bytes per word");
        return NULL;
    }
    const uint8_t *w = src.buf;
    uint64_t *out = dst.buf;
    for (Py_ssize_t i = 0; i < m; i++, w += 12) {
        uint64_t hi = 0, lo = 0;
        for (int k = 0; k < 4; k++) hi = hi << 8 | w[k];
        for (int k = 4; k < 12; k++) lo = lo << 8 | w[k];
        out[2 * kept] = hi;  /* written always, kept only below D: no branch to mispredict */
        out[2 * kept + 1] = lo;
        kept += ((u128)hi << 64 | lo) < DEALS;
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return PyLong_FromSsize_t(kept);
}

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"encode", k_encode, METH_VARARGS, "encode(owners_buf, out_buf): deal numbers as [hi, lo] uint64 pairs."},
    {"decode", k_decode, METH_VARARGS, "decode(limbs_buf, out_buf): deals (52 uint8 seats each) of numbers < D."},
    {"format_numbers", k_format_numbers, METH_VARARGS, "format_numbers(limbs_buf) -> bytes: decimal lines."},
    {"pbn_deal_strings", k_pbn_deal_strings, METH_VARARGS,
     "pbn_deal_strings(owners_buf, first) -> bytes: 70-byte PBN Deal values with newline."},
    {"pbn_games", k_pbn_games, METH_VARARGS,
     "pbn_games(owners, b0, limbs|None, head, players, middles, tail, nl) -> bytes: PBN games of boards b0.."},
    {"first_non_deal", k_first_non_deal, METH_VARARGS, "first_non_deal(owners_buf) -> first row that is not a deal, or -1."},
    {"number_bytes", k_number_bytes, METH_VARARGS, "number_bytes(limbs_buf) -> bytes: 12 big-endian bytes per number < D."},
    {"below_d", k_below_d, METH_VARARGS, "below_d(words_buf, out_buf) -> kept: the 12-byte big-endian words below D, as limbs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_kernel", "truedeal compiled kernels", -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) {
    build_tables();
    if (build_decode_tables() < 0) {
        PyErr_SetString(PyExc_ImportError, "truedeal._kernel: decode table constants do not match D");
        return NULL;
    }
    PyObject *m = PyModule_Create(&moddef);
    if (m && PyModule_AddIntConstant(m, "PBN_LEN", PBN_LEN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
