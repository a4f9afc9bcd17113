/* C baseline for bench_kernel.py: unconstrained deals by a Fisher-Yates shuffle.
 *
 *   fisher_yates N [pbn|seats] [SEED]
 *
 * Deals N deals, each a Fisher-Yates shuffle of the 52 cards driven by
 * xoshiro256** (seeded by splitmix64), and prints one line per deal: a PBN
 * deal value "N:S.H.D.C ..." (default) or the 52 seats as letters.  The
 * bounded draw uses Lemire's multiply-shift with rejection, so each shuffle
 * is exactly uniform.  Output goes through one large stdio buffer.  This is
 * the "fastest C dealer printing one line per deal" the kernel is compared
 * with; it is not part of truedeal.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t st[4];

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next(void) { /* xoshiro256** */
    uint64_t r = rotl(st[1] * 5, 7) * 9, t = st[1] << 17;
    st[2] ^= st[0];
    st[3] ^= st[1];
    st[1] ^= st[2];
    st[0] ^= st[3];
    st[2] ^= t;
    st[3] = rotl(st[3], 45);
    return r;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n): Lemire's nearly-divisionless method on 32-bit draws */
static inline uint32_t below(uint32_t n) {
    uint64_t m = (uint64_t)(uint32_t)next() * n;
    uint32_t lo = (uint32_t)m;
    if (lo < n) {
        uint32_t t = -n % n;
        while (lo < t) {
            m = (uint64_t)(uint32_t)next() * n;
            lo = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

static const char RANKS[] = "AKQJT98765432";

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int pbn = !(argc > 2 && strcmp(argv[2], "seats") == 0);
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 2024;
    for (int i = 0; i < 4; i++) st[i] = splitmix(&seed);
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    uint8_t deck[52];
    for (int c = 0; c < 52; c++) deck[c] = (uint8_t)c;
    char line[80];
    for (long d = 0; d < n; d++) {
        for (int i = 51; i > 0; i--) { /* shuffle the cards; hand h gets positions 13h.. */
            uint32_t j = below((uint32_t)i + 1);
            uint8_t t = deck[i];
            deck[i] = deck[j];
            deck[j] = t;
        }
        uint8_t owner[52];
        for (int p = 0; p < 52; p++) owner[deck[p]] = (uint8_t)(p / 13);
        char *q = line;
        if (pbn) { /* cards are 4 * rank + suit, ace first: append each card to its suit */
            char hs[4][4][13];
            int len[4][4] = {{0}};
            for (int c = 0; c < 52; c++) {
                int h = owner[c], s = c & 3;
                hs[h][s][len[h][s]++] = RANKS[c >> 2];
            }
            *q++ = 'N';
            *q++ = ':';
            for (int h = 0; h < 4; h++) {
                for (int s = 0; s < 4; s++) {
                    memcpy(q, hs[h][s], (size_t)len[h][s]);
                    q += len[h][s];
                    if (s < 3) *q++ = '.';
                }
                *q++ = h < 3 ? ' ' : '\n';
            }
        } else {
            for (int c = 0; c < 52; c++) *q++ = "NESW"[owner[c]];
            *q++ = '\n';
        }
        fwrite(line, 1, (size_t)(q - line), stdout);
    }
    return 0;
}
