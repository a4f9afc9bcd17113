/* truedeal._shake: several SHAKE-256 streams at once, for the seeded stream.
 *
 * The seeded stream (truedeal.randomness.SeededBits) is a sequence of
 * independent blocks: block b is SHAKE-256(prefix || b as 8 big-endian
 * bytes) squeezed to a fixed size (64 KiB in stream v1, 16 KiB in v2, 2 KiB
 * in v3).  Each block is sequential (its permutations follow one another),
 * but blocks are independent, so one pass of Keccak-f[1600] on vector
 * registers, a 64-bit lane per block, squeezes several of them: eight on
 * AVX-512 (for about the cost of two done one at a time by OpenSSL), four on
 * AVX2 (no rotate or three-input logic instruction there: rotations are two
 * shifts and an or, or one byte shuffle for 8 and 56).  The bytes are
 * SHAKE-256's (FIPS 202) on either path, tested against hashlib.
 *
 * The path is chosen at run time (__builtin_cpu_supports): AVX-512F, else
 * AVX2, else none; the code is compiled for each with target attributes, so
 * the module builds with plain gcc on x86-64 and imports anywhere.
 *
 * lanes() is the tuple of paths this CPU runs, by lanes, fastest first: (8, 4)
 * with AVX-512F, (4,) with AVX2 only, () otherwise (and on other machines).
 * available() says whether it is not empty; when it is, the caller keeps
 * using hashlib (the module still imports).
 *
 * blocks(prefix, first, out, lanes=0) fills out (8 blocks of len(out) / 8
 * bytes, a multiple of 8 up to 65536) with blocks first .. first + 7: one pass
 * of 8 lanes or two of 4.  Stream(prefix, block_bytes, lanes=0) reads the
 * blocks 0, 1, ... in order (readinto, read), `lanes` blocks a pass.  lanes=0
 * is the fastest path; 8 or 4 forces one (ValueError if the CPU lacks it), so
 * tests run both where they can.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#define LANES 8 /* blocks per call of blocks(), and the most lanes of a pass */
#define RATE 136 /* bytes absorbed or squeezed per permutation: SHAKE-256 */
#define BLOCK_MAX 65536
#define PREFIX_MAX 4096
#define MSG_MAX (PREFIX_MAX + 8 + RATE) /* a padded message: prefix, block number, padding */

#if HAVE_X86
static const uint64_t RC[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull, 0x8000000080008000ull,
    0x000000000000808Bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008Aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull,
    0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800Aull, 0x800000008000000Aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

/* rho offsets, indexed by lane x + 5y */
static const int RHO[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39,
                            41, 45, 15, 21, 8, 18, 2, 61, 56, 14};

/* pi: lane x + 5y moves to lane y + 5 ((2x + 3y) mod 5); constant so that
 * the unrolled rounds keep the state in registers */
static const int PI[25] = {0, 10, 20, 5, 15, 16, 1, 11, 21, 6, 7, 17, 2, 12, 22,
                           23, 8, 18, 3, 13, 14, 24, 9, 19, 4};

static inline uint64_t le64(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8); /* x86 is little-endian, as Keccak's lanes are */
    return x;
}

/* The padded message of one lane, prefix || be64(b) then SHAKE's domain
 * bits 1111 and pad10*1, into m (MSG_MAX bytes); returns its RATE-byte blocks. */
static size_t pad_message(uint8_t *m, const uint8_t *prefix, size_t plen, uint64_t b) {
    size_t mlen = plen + 8, nblocks = mlen / RATE + 1;
    memset(m, 0, nblocks * RATE);
    memcpy(m, prefix, plen);
    for (int k = 0; k < 8; k++) m[plen + k] = (uint8_t)(b >> (56 - 8 * k));
    m[mlen] ^= 0x1F;
    m[nblocks * RATE - 1] ^= 0x80;
    return nblocks;
}

/* ------------------------------------------------------------ AVX-512: 8 lanes */

#define TARGET __attribute__((target("avx512f")))

TARGET static void permute(__m512i *A) {
    __m512i B[25], C[5], D[5];
    for (int round = 0; round < 24; round++) {
#pragma GCC unroll 5
        for (int x = 0; x < 5; x++) /* theta; 0x96 = a ^ b ^ c */
            C[x] = _mm512_ternarylogic_epi64(_mm512_ternarylogic_epi64(A[x], A[x + 5], A[x + 10], 0x96), A[x + 15],
                                             A[x + 20], 0x96);
#pragma GCC unroll 5
        for (int x = 0; x < 5; x++) D[x] = _mm512_xor_si512(C[(x + 4) % 5], _mm512_rol_epi64(C[(x + 1) % 5], 1));
#pragma GCC unroll 25
        for (int i = 0; i < 25; i++) /* theta applied, then rho and pi */
            B[PI[i]] = _mm512_rolv_epi64(_mm512_xor_si512(A[i], D[i % 5]), _mm512_set1_epi64(RHO[i]));
#pragma GCC unroll 5
        for (int y = 0; y < 25; y += 5) /* chi; 0xD2 = a ^ (~b & c) */
#pragma GCC unroll 5
            for (int x = 0; x < 5; x++)
                A[y + x] = _mm512_ternarylogic_epi64(B[y + x], B[y + (x + 1) % 5], B[y + (x + 2) % 5], 0xD2);
        A[0] = _mm512_xor_si512(A[0], _mm512_set1_epi64((long long)RC[round]));
    }
}

/* Absorb lane l's message prefix || be64(first + l), padded, into the zero state A. */
TARGET static void absorb(__m512i *A, const uint8_t *prefix, size_t plen, uint64_t first) {
    uint8_t msg[LANES][MSG_MAX];
    size_t nblocks = 0;
    for (int l = 0; l < LANES; l++) nblocks = pad_message(msg[l], prefix, plen, first + (uint64_t)l);
    for (int i = 0; i < 25; i++) A[i] = _mm512_setzero_si512();
    for (size_t blk = 0; blk < nblocks; blk++) {
        for (int w = 0; w < RATE / 8; w++) {
            const size_t at = blk * RATE + 8 * (size_t)w;
            __m512i v = _mm512_set_epi64((long long)le64(msg[7] + at), (long long)le64(msg[6] + at),
                                         (long long)le64(msg[5] + at), (long long)le64(msg[4] + at),
                                         (long long)le64(msg[3] + at), (long long)le64(msg[2] + at),
                                         (long long)le64(msg[1] + at), (long long)le64(msg[0] + at));
            A[w] = _mm512_xor_si512(A[w], v);
        }
        permute(A);
    }
}

/* Squeeze `block` bytes of each lane into out + l * block. */
TARGET static void squeeze(__m512i *A, uint8_t *out, size_t block) {
    uint64_t words[LANES];
    for (size_t at = 0;; at += RATE) {
        for (int w = 0; w < RATE / 8; w++) {
            size_t pos = at + 8 * (size_t)w;
            if (pos >= block) return;
            _mm512_storeu_si512((void *)words, A[w]);
            for (int l = 0; l < LANES; l++) memcpy(out + (size_t)l * block + pos, &words[l], 8);
        }
        permute(A);
    }
}

TARGET static void eight_blocks(const uint8_t *prefix, size_t plen, uint64_t first, uint8_t *out, size_t block) {
    __m512i A[25];
    absorb(A, prefix, plen, first);
    squeeze(A, out, block);
}

/* ------------------------------------------------------------ AVX2: 4 lanes */

#define TARGET2 __attribute__((target("avx2")))

/* x's 64-bit lanes rotated left by n (a constant once the rounds are
 * unrolled): a byte shuffle for 8 and 56, else two shifts and an or. */
TARGET2 static inline __attribute__((always_inline)) __m256i rol4(__m256i x, int n) {
    if (n == 0) return x;
    if (n == 1) return _mm256_or_si256(_mm256_add_epi64(x, x), _mm256_srli_epi64(x, 63));
    if (n == 8)
        return _mm256_shuffle_epi8(x, _mm256_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2,
                                                       3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14));
    if (n == 56)
        return _mm256_shuffle_epi8(x, _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1, 2, 3, 4,
                                                       5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8));
    return _mm256_or_si256(_mm256_slli_epi64(x, n), _mm256_srli_epi64(x, 64 - n));
}

/* One round from S into T, plane by plane: output lane (X, Y) is input lane
 * (x, y) = ((X + 3Y) mod 5, X) after theta and rho (pi), so the five lanes of
 * an output plane are computed, chi'd and stored before the next plane, which
 * keeps what is live within the sixteen registers. */
TARGET2 static inline __attribute__((always_inline)) void round4(const __m256i *S, __m256i *T, uint64_t rc) {
    __m256i C[5], D[5], B[5];
#pragma GCC unroll 5
    for (int x = 0; x < 5; x++) /* theta */
        C[x] = _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(S[x], S[x + 5]), _mm256_xor_si256(S[x + 10], S[x + 15])),
                                S[x + 20]);
#pragma GCC unroll 5
    for (int x = 0; x < 5; x++) D[x] = _mm256_xor_si256(C[(x + 4) % 5], rol4(C[(x + 1) % 5], 1));
#pragma GCC unroll 5
    for (int Y = 0; Y < 5; Y++) {
#pragma GCC unroll 5
        for (int X = 0; X < 5; X++) { /* theta applied, then rho and pi */
            const int x = (X + 3 * Y) % 5, i = x + 5 * X;
            B[X] = rol4(_mm256_xor_si256(S[i], D[x]), RHO[i]);
        }
#pragma GCC unroll 5
        for (int X = 0; X < 5; X++) /* chi: a ^ (~b & c) */
            T[X + 5 * Y] = _mm256_xor_si256(B[X], _mm256_andnot_si256(B[(X + 1) % 5], B[(X + 2) % 5]));
    }
    T[0] = _mm256_xor_si256(T[0], _mm256_set1_epi64x((long long)rc));
}

TARGET2 static void permute4(__m256i *A) {
    __m256i E[25];
    for (int round = 0; round < 24; round += 2) {
        round4(A, E, RC[round]);
        round4(E, A, RC[round + 1]);
    }
}

/* Absorb lane l's message prefix || be64(first + l), padded, into the zero state A. */
TARGET2 static void absorb4(__m256i *A, const uint8_t *prefix, size_t plen, uint64_t first) {
    uint8_t msg[4][MSG_MAX];
    size_t nblocks = 0;
    for (int l = 0; l < 4; l++) nblocks = pad_message(msg[l], prefix, plen, first + (uint64_t)l);
    for (int i = 0; i < 25; i++) A[i] = _mm256_setzero_si256();
    for (size_t blk = 0; blk < nblocks; blk++) {
        for (int w = 0; w < RATE / 8; w++) {
            const size_t at = blk * RATE + 8 * (size_t)w;
            __m256i v = _mm256_set_epi64x((long long)le64(msg[3] + at), (long long)le64(msg[2] + at),
                                          (long long)le64(msg[1] + at), (long long)le64(msg[0] + at));
            A[w] = _mm256_xor_si256(A[w], v);
        }
        permute4(A);
    }
}

/* Squeeze `block` bytes of each lane into out + l * block: four words of
 * the four lanes at a time, transposed so that each lane stores 32 bytes. */
TARGET2 static void squeeze4(__m256i *A, uint8_t *out, size_t block) {
    uint64_t words[4];
    for (size_t at = 0;; at += RATE) {
        int w = 0;
        for (; w + 4 <= RATE / 8 && at + 8 * (size_t)w + 32 <= block; w += 4) {
            const size_t pos = at + 8 * (size_t)w;
            __m256i t0 = _mm256_unpacklo_epi64(A[w], A[w + 1]), t1 = _mm256_unpackhi_epi64(A[w], A[w + 1]);
            __m256i t2 = _mm256_unpacklo_epi64(A[w + 2], A[w + 3]), t3 = _mm256_unpackhi_epi64(A[w + 2], A[w + 3]);
            _mm256_storeu_si256((__m256i *)(out + pos), _mm256_permute2x128_si256(t0, t2, 0x20));
            _mm256_storeu_si256((__m256i *)(out + block + pos), _mm256_permute2x128_si256(t1, t3, 0x20));
            _mm256_storeu_si256((__m256i *)(out + 2 * block + pos), _mm256_permute2x128_si256(t0, t2, 0x31));
            _mm256_storeu_si256((__m256i *)(out + 3 * block + pos), _mm256_permute2x128_si256(t1, t3, 0x31));
        }
        for (; w < RATE / 8; w++) {
            const size_t pos = at + 8 * (size_t)w;
            if (pos >= block) return;
            _mm256_storeu_si256((__m256i *)words, A[w]);
            for (int l = 0; l < 4; l++) memcpy(out + (size_t)l * block + pos, &words[l], 8);
        }
        permute4(A);
    }
}

TARGET2 static void four_blocks(const uint8_t *prefix, size_t plen, uint64_t first, uint8_t *out, size_t block) {
    __m256i A[25];
    absorb4(A, prefix, plen, first);
    squeeze4(A, out, block);
}
#endif /* HAVE_X86 */

/* ------------------------------------------------------------ dispatch */

static int cpu_avx512 = -1, cpu_avx2 = -1;

static void detect(void) {
    if (cpu_avx512 >= 0) return;
#if HAVE_X86
    __builtin_cpu_init();
    cpu_avx512 = __builtin_cpu_supports("avx512f") != 0;
    cpu_avx2 = __builtin_cpu_supports("avx2") != 0;
#else
    cpu_avx512 = cpu_avx2 = 0;
#endif
}

/* Whether this CPU runs the path of `lanes` lanes (8: AVX-512F, 4: AVX2). */
static int runs(int lanes) {
    detect();
    return lanes == 8 ? cpu_avx512 : lanes == 4 ? cpu_avx2 : 0;
}

/* The path asked for (0: the fastest this CPU runs), or 0 with *err set. */
static int choose(int lanes, const char **err) {
    if (lanes == 0) lanes = runs(8) ? 8 : runs(4) ? 4 : 0;
    else if (lanes != 8 && lanes != 4) {
        *err = "lanes must be 0 (the fastest path), 8 (AVX-512F) or 4 (AVX2)";
        return 0;
    }
    if (!lanes || !runs(lanes)) {
        *err = !lanes ? "this CPU has neither AVX-512F nor AVX2" : lanes == 8 ? "this CPU has no AVX-512F" : "this CPU has no AVX2";
        return 0;
    }
    return lanes;
}

/* Blocks first .. first + lanes - 1 into out, `block` bytes each, on the path of `lanes` lanes. */
static void fill_pass(int lanes, const uint8_t *prefix, size_t plen, uint64_t first, uint8_t *out, size_t block) {
#if HAVE_X86
    if (lanes == 8) eight_blocks(prefix, plen, first, out, block);
    else four_blocks(prefix, plen, first, out, block);
#else
    (void)lanes, (void)prefix, (void)plen, (void)first, (void)out, (void)block;
#endif
}

static PyObject *sh_available(PyObject *self, PyObject *noargs) { return PyBool_FromLong(runs(8) || runs(4)); }

static PyObject *sh_lanes(PyObject *self, PyObject *noargs) {
    return runs(8) ? Py_BuildValue("(ii)", 8, 4) : runs(4) ? Py_BuildValue("(i)", 4) : PyTuple_New(0);
}

static PyObject *sh_blocks(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"prefix", "first", "out", "lanes", NULL};
    Py_buffer prefix, out;
    unsigned long long first;
    int lanes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*Kw*|i:blocks", kwlist, &prefix, &first, &out, &lanes)) return NULL;
    const char *err = NULL;
    lanes = choose(lanes, &err);
    if (err)
        ;
    else if (prefix.len > PREFIX_MAX)
        err = "blocks: prefix too long";
    else if (out.len <= 0 || out.len % (8 * LANES) || out.len > (Py_ssize_t)LANES * BLOCK_MAX)
        err = "blocks: out must hold 8 blocks of a multiple of 8 bytes, at most 65536 each";
    if (!err) {
        size_t block = (size_t)out.len / LANES;
        Py_BEGIN_ALLOW_THREADS
        for (int at = 0; at < LANES; at += lanes) /* one pass of 8 lanes or two of 4 */
            fill_pass(lanes, prefix.buf, (size_t)prefix.len, first + (uint64_t)at, (uint8_t *)out.buf + (size_t)at * block, block);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&prefix);
    PyBuffer_Release(&out);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ Stream */

/* Stream(prefix, block_bytes, lanes=0): the bytes of SeededBits' stream
 * (blocks 0, 1, ... of SHAKE-256(prefix || be64(b)), each block_bytes long),
 * read with readinto(buffer), `lanes` blocks computed a pass.  The same bytes
 * as SeededBits.readinto's Python loop, on any path, without its per-call
 * cost: the kernel reads a chunk's bits in hundreds of small calls when a
 * chunk is drawn shard by shard (stream v3). */
typedef struct {
    PyObject_HEAD
    uint8_t *prefix, *buf;
    size_t plen, block, have, pos;
    uint64_t next;
    int lanes;
} Stream;

static void stream_dealloc(Stream *self) {
    PyMem_Free(self->prefix);
    PyMem_Free(self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int stream_init(Stream *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"prefix", "block_bytes", "lanes", NULL};
    Py_buffer prefix;
    Py_ssize_t block;
    int lanes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*n|i:Stream", kwlist, &prefix, &block, &lanes)) return -1;
    const char *err = NULL;
    lanes = choose(lanes, &err);
    if (!err)
        err = prefix.len > PREFIX_MAX                          ? "Stream: prefix too long"
              : block <= 0 || block % 8 || block > BLOCK_MAX ? "Stream: block_bytes must be a multiple of 8, at most 65536"
                                                               : NULL;
    if (!err) {
        PyMem_Free(self->prefix);
        PyMem_Free(self->buf);
        self->prefix = PyMem_Malloc((size_t)prefix.len + 1);
        self->buf = PyMem_Malloc((size_t)block * (size_t)lanes);
        if (!self->prefix || !self->buf) err = "";
    }
    if (!err) {
        memcpy(self->prefix, prefix.buf, (size_t)prefix.len);
        self->plen = (size_t)prefix.len;
        self->block = (size_t)block;
        self->lanes = lanes;
        self->have = self->pos = 0;
        self->next = 0;
    }
    PyBuffer_Release(&prefix);
    if (err && !*err) PyErr_NoMemory();
    else if (err) PyErr_SetString(PyExc_ValueError, err);
    return err ? -1 : 0;
}

static void stream_fill(Stream *self, uint8_t *dst, size_t n) {
    while (n) {
        if (self->pos == self->have) {
            Py_BEGIN_ALLOW_THREADS /* 8 blocks of 64 KiB take a millisecond: let a job's writer thread run */
            fill_pass(self->lanes, self->prefix, self->plen, self->next, self->buf, self->block);
            Py_END_ALLOW_THREADS
            self->next += (uint64_t)self->lanes;
            self->have = self->block * (size_t)self->lanes;
            self->pos = 0;
        }
        size_t take = self->have - self->pos < n ? self->have - self->pos : n;
        memcpy(dst, self->buf + self->pos, take);
        self->pos += take;
        dst += take;
        n -= take;
    }
}

static PyObject *stream_readinto(Stream *self, PyObject *arg) {
    Py_buffer out;
    if (PyObject_GetBuffer(arg, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t n = out.len;
    if (self->buf == NULL) {
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_ValueError, "Stream: not initialised");
        return NULL;
    }
    stream_fill(self, out.buf, (size_t)n);
    PyBuffer_Release(&out);
    return PyLong_FromSsize_t(n);
}

static PyObject *stream_read(Stream *self, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Stream.read: a negative size");
        return NULL;
    }
    if (self->buf == NULL) {
        PyErr_SetString(PyExc_ValueError, "Stream: not initialised");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out) stream_fill(self, (uint8_t *)PyBytes_AS_STRING(out), (size_t)n);
    return out;
}

static PyMethodDef stream_methods[] = {
    {"readinto", (PyCFunction)stream_readinto, METH_O, "readinto(buffer): fill it with the next len(buffer) bytes; returns that length."},
    {"read", (PyCFunction)stream_read, METH_O, "read(n): the next n bytes."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef stream_members[] = {
    {"lanes", T_INT, offsetof(Stream, lanes), READONLY, "blocks computed a pass: 8 (AVX-512F) or 4 (AVX2)"},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "truedeal._shake.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(prefix, block_bytes, lanes=0): SHAKE-256(prefix || be64(b)) blocks, read in order, `lanes` a pass\n"
              "(0: the fastest path, 8: AVX-512F, 4: AVX2).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stream_init,
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_methods = stream_methods,
    .tp_members = stream_members,
};

static PyMethodDef methods[] = {
    {"available", sh_available, METH_NOARGS, "Whether blocks() and Stream run on this CPU (AVX-512F or AVX2)."},
    {"lanes", sh_lanes, METH_NOARGS, "The paths this CPU runs, by lanes, fastest first: (8, 4), (4,) or ()."},
    {"blocks", (PyCFunction)(void (*)(void))sh_blocks, METH_VARARGS | METH_KEYWORDS,
     "blocks(prefix, first, out, lanes=0): SHAKE-256(prefix || be64(first + l)) to len(out) / 8 bytes, l < 8, into out\n"
     "(lanes 0: the fastest path, 8: AVX-512F, 4: AVX2, two passes)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_shake", "several SHAKE-256 blocks at once (AVX-512F or AVX2)", -1, methods};

PyMODINIT_FUNC PyInit__shake(void) {
    if (PyType_Ready(&StreamType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    Py_INCREF(&StreamType);
    if (PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0) {
        Py_DECREF(&StreamType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
