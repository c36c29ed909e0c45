/* unit_sha1.c -- workloads/sha1.h against the FIPS 180 / RFC 3174 test vectors. */
#include "sbtest.h"
#include <stdio.h>
#include <string.h>

#include "sha1.h"

static void hex(const uint8_t d[SHA1_DIGEST_SIZE], char out[2 * SHA1_DIGEST_SIZE + 1])
{
    for (int i = 0; i < SHA1_DIGEST_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check(const void *msg, size_t n, const char *want)
{
    uint8_t d[SHA1_DIGEST_SIZE];
    char got[2 * SHA1_DIGEST_SIZE + 1];
    sha1(d, msg, n);
    hex(d, got);
    cr_expect_str_eq(got, want, "length %zu", n);
}

Test(sha1, fips_abc, .timeout = 5)
{
    check("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
}

Test(sha1, empty, .timeout = 5)
{
    check("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

/* 56 bytes: the padding does not fit in the first block. */
Test(sha1, fips_two_blocks, .timeout = 5)
{
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check(m, strlen(m), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

Test(sha1, fips_896_bits, .timeout = 5)
{
    const char *m = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check(m, strlen(m), "a49b2446a02c645bf419f995b67091253a04a259");
}

Test(sha1, quick_brown_fox, .timeout = 5)
{
    const char *m = "The quick brown fox jumps over the lazy dog";
    check(m, strlen(m), "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

/* One million 'a', fed in uneven pieces through the streaming interface. */
Test(sha1, million_a_streamed, .timeout = 10)
{
    static uint8_t chunk[1024]; /* > the largest step below */
    memset(chunk, 'a', sizeof chunk);
    sha1_ctx_t c;
    sha1_init(&c);
    size_t left = 1000000, step = 1;
    while (left > 0) {
        size_t n = step < left ? step : left;
        sha1_update(&c, chunk, n);
        left -= n;
        step = step % 997 + 13; /* 1, 14, 27, ... (<= 1009): every offset in a block */
    }
    uint8_t d[SHA1_DIGEST_SIZE];
    char got[2 * SHA1_DIGEST_SIZE + 1];
    sha1_final(&c, d);
    hex(d, got);
    cr_expect_str_eq(got, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

/* RFC 3174 test 4: "01234567" x 80 (640 bytes, ten whole blocks). */
Test(sha1, rfc3174_repeated, .timeout = 5)
{
    char m[641];
    for (int i = 0; i < 80; i++)
        memcpy(m + 8 * i, "01234567", 8);
    check(m, 640, "dea356a2cddd90c7a7ecedc5ebb563934f460452");
}

/* Byte-at-a-time streaming equals one call, for every length around the padding edges. */
Test(sha1, streaming_matches_one_shot, .timeout = 5)
{
    uint8_t msg[200];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 31 + 7);
    for (size_t n = 0; n <= sizeof msg; n++) {
        uint8_t a[SHA1_DIGEST_SIZE], b[SHA1_DIGEST_SIZE];
        sha1(a, msg, n);
        sha1_ctx_t c;
        sha1_init(&c);
        for (size_t i = 0; i < n; i++)
            sha1_update(&c, msg + i, 1);
        sha1_final(&c, b);
        cr_expect(memcmp(a, b, sizeof a) == 0, "length %zu", n);
    }
}
