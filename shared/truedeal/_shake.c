/* truedeal._shake: eight SHAKE-256 streams at once, for the seeded stream.
 *
 * The seeded stream (truedeal.randomness.SeededBits) is a sequence of
 * independent blocks: block b is SHAKE-256(prefix || b as 8 big-endian
 * bytes) squeezed to a fixed size (64 KiB in stream v1, 16 KiB in v2).  Each block is sequential (its permutations
 * follow one another), but eight blocks are independent, so one pass of
 * Keccak-f[1600] on AVX-512 registers, a 64-bit lane per block, squeezes
 * eight of them for about the cost of two done one at a time by OpenSSL.
 * The bytes are SHAKE-256's (FIPS 202), tested against hashlib.
 *
 * blocks(prefix, first, out) fills out (8 blocks of len(out) / 8 bytes, a
 * multiple of 8 up to 65536) with blocks first .. first + 7.  Stream(prefix,
 * block_bytes) reads the blocks 0, 1, ... in order (readinto, read).  available() says whether this CPU has AVX-512F; when
 * it does not, the caller keeps using hashlib (the module still imports).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#define LANES 8
#define RATE 136 /* bytes absorbed or squeezed per permutation: SHAKE-256 */
#define BLOCK_MAX 65536
#define PREFIX_MAX 4096

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

static inline uint64_t le64(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8); /* x86 is little-endian, as Keccak's lanes are */
    return x;
}

/* Absorb lane l's message prefix || be64(first + l), padded (SHAKE's
 * domain bits 1111 then pad10*1), into the zero state A. */
TARGET static void absorb(__m512i *A, const uint8_t *prefix, size_t plen, uint64_t first) {
    size_t mlen = plen + 8, nblocks = mlen / RATE + 1;
    uint8_t msg[LANES][PREFIX_MAX + 8 + RATE];
    for (int l = 0; l < LANES; l++) {
        uint8_t *m = msg[l];
        memset(m, 0, nblocks * RATE);
        memcpy(m, prefix, plen);
        uint64_t b = first + (uint64_t)l;
        for (int k = 0; k < 8; k++) m[plen + k] = (uint8_t)(b >> (56 - 8 * k));
        m[mlen] ^= 0x1F;
        m[nblocks * RATE - 1] ^= 0x80;
    }
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
#endif

static int has_avx512(void) {
#if HAVE_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

static PyObject *sh_available(PyObject *self, PyObject *noargs) { return PyBool_FromLong(has_avx512()); }

static PyObject *sh_blocks(PyObject *self, PyObject *args) {
    Py_buffer prefix, out;
    unsigned long long first;
    if (!PyArg_ParseTuple(args, "y*Kw*", &prefix, &first, &out)) return NULL;
    const char *err = NULL;
    if (!has_avx512())
        err = "blocks: this CPU has no AVX-512F";
    else if (prefix.len > PREFIX_MAX)
        err = "blocks: prefix too long";
    else if (out.len <= 0 || out.len % (8 * LANES) || out.len > (Py_ssize_t)LANES * BLOCK_MAX)
        err = "blocks: out must hold 8 blocks of a multiple of 8 bytes, at most 65536 each";
#if HAVE_X86
    if (!err) {
        Py_BEGIN_ALLOW_THREADS
        eight_blocks(prefix.buf, (size_t)prefix.len, first, out.buf, (size_t)out.len / LANES);
        Py_END_ALLOW_THREADS
    }
#endif
    PyBuffer_Release(&prefix);
    PyBuffer_Release(&out);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ Stream */

/* Stream(prefix, block_bytes): the bytes of SeededBits' stream (blocks 0, 1,
 * ... of SHAKE-256(prefix || be64(b)), each block_bytes long), read with
 * readinto(buffer).  The same bytes as SeededBits.readinto's Python loop,
 * without its per-call cost: the kernel reads a chunk's bits in hundreds of
 * small calls when a chunk is drawn shard by shard (stream v3). */
typedef struct {
    PyObject_HEAD
    uint8_t *prefix, *buf;
    size_t plen, block, have, pos;
    uint64_t next;
} Stream;

static void stream_dealloc(Stream *self) {
    PyMem_Free(self->prefix);
    PyMem_Free(self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int stream_init(Stream *self, PyObject *args, PyObject *kwds) {
    Py_buffer prefix;
    Py_ssize_t block;
    if (!PyArg_ParseTuple(args, "y*n", &prefix, &block)) return -1;
    const char *err = !has_avx512() ? "Stream: this CPU has no AVX-512F"
                      : prefix.len > PREFIX_MAX ? "Stream: prefix too long"
                      : block <= 0 || block % 8 || block > BLOCK_MAX ? "Stream: block_bytes must be a multiple of 8, at most 65536"
                                                                       : NULL;
    if (!err) {
        PyMem_Free(self->prefix);
        PyMem_Free(self->buf);
        self->prefix = PyMem_Malloc((size_t)prefix.len + 1);
        self->buf = PyMem_Malloc((size_t)block * LANES);
        if (!self->prefix || !self->buf) err = "";
    }
    if (!err) {
        memcpy(self->prefix, prefix.buf, (size_t)prefix.len);
        self->plen = (size_t)prefix.len;
        self->block = (size_t)block;
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
#if HAVE_X86
            Py_BEGIN_ALLOW_THREADS /* 8 blocks of 64 KiB take a millisecond: let a job's writer thread run */
            eight_blocks(self->prefix, self->plen, self->next, self->buf, self->block);
            Py_END_ALLOW_THREADS
#endif
            self->next += LANES;
            self->have = self->block * LANES;
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

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "truedeal._shake.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(prefix, block_bytes): SHAKE-256(prefix || be64(b)) blocks, read in order.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stream_init,
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_methods = stream_methods,
};

static PyMethodDef methods[] = {
    {"available", sh_available, METH_NOARGS, "Whether blocks() can run on this CPU (AVX-512F)."},
    {"blocks", sh_blocks, METH_VARARGS,
     "blocks(prefix, first, out): SHAKE-256(prefix || be64(first + l)) to len(out) / 8 bytes, l < 8, into out."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_shake", "eight SHAKE-256 blocks at once", -1, methods};

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
