/*
 * SipHash-2-4 (lib/shingle/siphash.c): the official vectors of both
 * variants, agreement with libsodium on random keys and messages, the
 * incremental form against the one-shot one at every split, NULL handling.
 */
#include "testlib.h"

#include <minlsh.h>
#include <sodium.h>

#include "shingle/shingle.h"

/* SipHash-2-4, key 00..0f, message 00..(i-1): tag i as an integer (the
 * published bytes, read little-endian). Same data as tests/vectors/siphash-2-4-64.txt. */
static const uint64_t vec64[64] = {
    UINT64_C(0x726fdb47dd0e0e31), UINT64_C(0x74f839c593dc67fd),
    UINT64_C(0x0d6c8009d9a94f5a), UINT64_C(0x85676696d7fb7e2d),
    UINT64_C(0xcf2794e0277187b7), UINT64_C(0x18765564cd99a68d),
    UINT64_C(0xcbc9466e58fee3ce), UINT64_C(0xab0200f58b01d137),
    UINT64_C(0x93f5f5799a932462), UINT64_C(0x9e0082df0ba9e4b0),
    UINT64_C(0x7a5dbbc594ddb9f3), UINT64_C(0xf4b32f46226bada7),
    UINT64_C(0x751e8fbc860ee5fb), UINT64_C(0x14ea5627c0843d90),
    UINT64_C(0xf723ca908e7af2ee), UINT64_C(0xa129ca6149be45e5),
    UINT64_C(0x3f2acc7f57c29bdb), UINT64_C(0x699ae9f52cbe4794),
    UINT64_C(0x4bc1b3f0968dd39c), UINT64_C(0xbb6dc91da77961bd),
    UINT64_C(0xbed65cf21aa2ee98), UINT64_C(0xd0f2cbb02e3b67c7),
    UINT64_C(0x93536795e3a33e88), UINT64_C(0xa80c038ccd5ccec8),
    UINT64_C(0xb8ad50c6f649af94), UINT64_C(0xbce192de8a85b8ea),
    UINT64_C(0x17d835b85bbb15f3), UINT64_C(0x2f2e6163076bcfad),
    UINT64_C(0xde4daaaca71dc9a5), UINT64_C(0xa6a2506687956571),
    UINT64_C(0xad87a3535c49ef28), UINT64_C(0x32d892fad841c342),
    UINT64_C(0x7127512f72f27cce), UINT64_C(0xa7f32346f95978e3),
    UINT64_C(0x12e0b01abb051238), UINT64_C(0x15e034d40fa197ae),
    UINT64_C(0x314dffbe0815a3b4), UINT64_C(0x027990f029623981),
    UINT64_C(0xcadcd4e59ef40c4d), UINT64_C(0x9abfd8766a33735c),
    UINT64_C(0x0e3ea96b5304a7d0), UINT64_C(0xad0c42d6fc585992),
    UINT64_C(0x187306c89bc215a9), UINT64_C(0xd4a60abcf3792b95),
    UINT64_C(0xf935451de4f21df2), UINT64_C(0xa9538f0419755787),
    UINT64_C(0xdb9acddff56ca510), UINT64_C(0xd06c98cd5c0975eb),
    UINT64_C(0xe612a3cb9ecba951), UINT64_C(0xc766e62cfcadaf96),
    UINT64_C(0xee64435a9752fe72), UINT64_C(0xa192d576b245165a),
    UINT64_C(0x0a8787bf8ecb74b2), UINT64_C(0x81b3e73d20b49b6f),
    UINT64_C(0x7fa8220ba3b2ecea), UINT64_C(0x245731c13ca42499),
    UINT64_C(0xb78dbfaf3a8d83bd), UINT64_C(0xea1ad565322a1a0b),
    UINT64_C(0x60e61c23a3795013), UINT64_C(0x6606d7e446282b93),
    UINT64_C(0x6ca4ecb15c5f91e1), UINT64_C(0x9f626da15c9625f3),
    UINT64_C(0xe51b38608ef25f57), UINT64_C(0x958a324ceb064572),
};
/* SipHash-2-4-128: tag i as its 16 bytes in output order
 * (tests/vectors/siphash-2-4-128.txt). */
static const char *const vec128[64] = {
    "a3817f04ba25a8e66df67214c7550293",
    "da87c1d86b99af44347659119b22fc45",
    "8177228da4a45dc7fca38bdef60affe4",
    "9c70b60c5267a94e5f33b6b02985ed51",
    "f88164c12d9c8faf7d0f6e7c7bcd5579",
    "1368875980776f8854527a07690e9627",
    "14eeca338b208613485ea0308fd7a15e",
    "a1f1ebbed8dbc153c0b84aa61ff08239",
    "3b62a9ba6258f5610f83e264f31497b4",
    "264499060ad9baabc47f8b02bb6d71ed",
    "00110dc378146956c95447d3f3d0fbba",
    "0151c568386b6677a2b4dc6f81e5dc18",
    "d626b266905ef35882634df68532c125",
    "9869e247e9c08b10d029934fc4b952f7",
    "31fcefac66d7de9c7ec7485fe4494902",
    "5493e99933b0a8117e08ec0f97cfc3d9",
    "6ee2a4ca67b054bbfd3315bf85230577",
    "473d06e8738db89854c066c47ae47740",
    "a426e5e423bf4885294da481feaef723",
    "78017731cf65fab074d5208952512eb1",
    "9e25fc833f2290733e9344a5e83839eb",
    "568e495abe525a218a2214cd3e071d12",
    "4a29b54552d16b9a469c10528eff0aae",
    "c9d184ddd5a9f5e0cf8ce29a9abf691c",
    "2db479ae78bd50d8882a8a178a6132ad",
    "8ece5f042d5e447b5051b9eacb8d8f6f",
    "9c0b53b4b3c307e87eaee08678141f66",
    "abf248af69a6eae4bfd3eb2f129eeb94",
    "0664da1668574b88b935f3027358aef4",
    "aa4b9dc4bf337de90cd4fd3c467c6ab7",
    "ea5c7f471faf6bde2b1ad7d4686d2287",
    "2939b0183223fafc1723de4f52c43d35",
    "7c3956ca5eeafc3e363e9d556546eb68",
    "77c6077146f01c32b6b69d5f4ea9ffcf",
    "37a6986cb8847edf0925f0f1309b54de",
    "a705f0e69da9a8f907241a2e923c8cc8",
    "3dc47d1f29c448461e9e76ed904f6711",
    "0d62bf01e6fc0e1a0d3c4751c5d3692b",
    "8c03468bca7c669ee4fd5e084bbee7b5",
    "528a5bb93baf2c9c4473cce5d0d22bd9",
    "df6a301e95c95dad97ae0cc8c6913bd8",
    "801189902c857f39e73591285e70b6db",
    "e617346ac9c231bb3650ae34ccca0c5b",
    "27d93437efb721aa401821dcec5adf89",
    "89237d9ded9c5e78d8b1c9b166cc7342",
    "4a6d8091bf5e7d651189fa94a250b14c",
    "0e33f96055e7ae893ffc0e3dcf492902",
    "e61c432b720b19d18ec8d84bdc63151b",
    "f7e5aef549f782cf379055a608269b16",
    "438d030fd0b7a54fa837f2ad201a6403",
    "a590d3ee4fbf04e3247e0d27f286423f",
    "5fe2c1a172fe93c4b15cd37caef9f538",
    "2c97325cbd06b36eb2133dd08b3a017c",
    "92c814227a6bca949ff0659f002ad39e",
    "dce850110bd8328cfbd50841d6911d87",
    "67f14984c7da791248e32bb5922583da",
    "1938f2cf72d54ee97e94166fa91d2a36",
    "74481e9646ed49fe0f6224301604698e",
    "57fca5de98a9d6d8006438d0583d8a1d",
    "9fecde1cefdc1cbed4763674d9575359",
    "e3040c00eb28f15366ca73cbd872e740",
    "7697009a6a831dfecca91c5993670f7a",
    "5853542321f567a005d547a4f04759bd",
    "5150d1772f50834a503e069a973fbd7c",
};

static uint8_t hexval(char c) {
    return (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

static void unhex(uint8_t *out, const char *hex, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        out[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
}

static void ref_key_msg(uint8_t key[16], uint8_t msg[64]) {
    int i;
    for (i = 0; i < 16; i++) key[i] = (uint8_t)i;
    for (i = 0; i < 64; i++) msg[i] = (uint8_t)i;
}

static void test_vectors_64(void) {
    uint8_t key[16], msg[64], le[8];
    uint64_t tag;
    int i;
    ref_key_msg(key, msg);
    for (i = 0; i < 64; i++) {
        EXPECT_OK(minlsh_siphash24(&tag, key, msg, (size_t)i));
        EXPECT_MSG(tag == vec64[i], "64-bit vector %d: got %016" PRIx64, i, tag);
    }
    /* The published bytes are the little-endian form of the integer. */
    unhex(le, "310e0edd47db6f72", 8);
    EXPECT_OK(minlsh_siphash24(&tag, key, msg, 0));
    EXPECT_EQ_U64(tag, minlsh__load64le(le));
    EXPECT_EQ_U64(tag, UINT64_C(0x726fdb47dd0e0e31));
}

static void test_vectors_128(void) {
    uint8_t key[16], msg[64], want[16], got[16];
    int i;
    ref_key_msg(key, msg);
    for (i = 0; i < 64; i++) {
        unhex(want, vec128[i], 16);
        EXPECT_OK(minlsh_siphash24_128(got, key, msg, (size_t)i));
        EXPECT_MSG(memcmp(got, want, 16) == 0, "128-bit vector %d", i);
    }
}

/* The embedded tables must be the data files' content (the files are kept
 * under tests/vectors for other implementations). */
static void test_vector_files(void) {
    const char *names[2] = {"vectors/siphash-2-4-64.txt", "vectors/siphash-2-4-128.txt"};
    int f;
    for (f = 0; f < 2; f++) {
        FILE *fh = fopen(tl_data_path(names[f]), "r");
        char line[256];
        int n = 0;
        EXPECT_MSG(fh != NULL, "cannot open %s", names[f]);
        if (fh == NULL) continue;
        while (fgets(line, sizeof line, fh) != NULL) {
            size_t len = strcspn(line, "\r\n");
            line[len] = 0;
            if (len == 0 || line[0] == '#') continue;
            if (n >= 64) {
                n++;
                continue;
            }
            if (f == 0) {
                uint8_t b[8];
                EXPECT_EQ_INT(len, 16);
                unhex(b, line, 8);
                EXPECT_EQ_U64(minlsh__load64le(b), vec64[n]);
            } else {
                EXPECT_EQ_INT(len, 32);
                EXPECT_MSG(strcmp(line, vec128[n]) == 0, "128-bit line %d", n);
            }
            n++;
        }
        fclose(fh);
        EXPECT_EQ_INT(n, 64);
    }
}

static void fill_random(uint64_t *st, uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = (uint8_t)tl_rand(st);
}

static void test_libsodium_agreement(void) {
    uint8_t key[16], msg[301], s8[8], s16[16], m16[16];
    uint64_t st = 12345, tag;
    int i, bad64 = 0, bad128 = 0;
    EXPECT_MSG(sodium_init() >= 0, "sodium_init failed");
    EXPECT_EQ_INT(crypto_shorthash_BYTES, 8);
    EXPECT_EQ_INT(crypto_shorthash_siphashx24_BYTES, 16);
    for (i = 0; i < 100000; i++) {
        size_t len = (size_t)(tl_rand(&st) % 301);
        fill_random(&st, key, 16);
        fill_random(&st, msg, len);
        /* crypto_shorthash is SipHash-2-4 with the 8-byte tag in output
         * order, i.e. little-endian of our integer. */
        crypto_shorthash(s8, msg, len, key);
        if (minlsh_siphash24(&tag, key, msg, len) != 0 || tag != minlsh__load64le(s8))
            bad64++;
        crypto_shorthash_siphashx24(s16, msg, len, key);
        if (minlsh_siphash24_128(m16, key, msg, len) != 0 || memcmp(m16, s16, 16) != 0)
            bad128++;
    }
    EXPECT_EQ_INT(bad64, 0);
    EXPECT_EQ_INT(bad128, 0);
}

/* Incremental == one-shot for every message length 0..130 and every way to
 * cut it in two, and in three for the shorter ones. */
static void test_incremental(void) {
    uint8_t key[16], msg[131], one128[16], inc128[16];
    uint64_t st = 99, k0, k1, one64;
    size_t len, a, b;
    int bad = 0;
    fill_random(&st, key, 16);
    fill_random(&st, msg, sizeof msg);
    k0 = minlsh__load64le(key);
    k1 = minlsh__load64le(key + 8);
    for (len = 0; len <= 130; len++) {
        EXPECT_OK(minlsh_siphash24(&one64, key, msg, len));
        EXPECT_OK(minlsh_siphash24_128(one128, key, msg, len));
        if (minlsh__siphash24_u64(k0, k1, msg, len) != one64) bad++;
        for (a = 0; a <= len; a++) {
            minlsh__siphash h64, h128;
            minlsh__siphash_init(&h64, k0, k1, 0);
            minlsh__siphash_init(&h128, k0, k1, 1);
            minlsh__siphash_update(&h64, msg, a);
            minlsh__siphash_update(&h128, msg, a);
            minlsh__siphash_update(&h64, msg + a, len - a);
            minlsh__siphash_update(&h128, msg + a, len - a);
            if (minlsh__siphash_final64(&h64) != one64) bad++;
            minlsh__siphash_final128(&h128, inc128);
            if (memcmp(inc128, one128, 16) != 0) bad++;
            /* final does not disturb the state: a second call agrees */
            if (minlsh__siphash_final64(&h64) != one64) bad++;
            if (len > 40) continue;
            for (b = a; b <= len; b++) {
                minlsh__siphash_init(&h64, k0, k1, 0);
                minlsh__siphash_update(&h64, msg, a);
                minlsh__siphash_update(&h64, msg + a, b - a);
                minlsh__siphash_update(&h64, NULL, 0);
                minlsh__siphash_update(&h64, msg + b, len - b);
                if (minlsh__siphash_final64(&h64) != one64) bad++;
            }
        }
        {   /* byte at a time */
            minlsh__siphash h;
            minlsh__siphash_init(&h, k0, k1, 1);
            for (a = 0; a < len; a++) minlsh__siphash_update(&h, msg + a, 1);
            minlsh__siphash_final128(&h, inc128);
            if (memcmp(inc128, one128, 16) != 0) bad++;
        }
    }
    EXPECT_EQ_INT(bad, 0);
}

static void test_null_handling(void) {
    uint8_t key[16] = {0}, out16[16];
    uint64_t out = 7;
    int i;
    for (i = 0; i < 16; i++) key[i] = (uint8_t)i;
    EXPECT_ERR(minlsh_siphash24(NULL, key, "a", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_siphash24(&out, NULL, "a", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_siphash24(&out, key, NULL, 1), MINLSH_E_NULL);
    EXPECT_EQ_U64(out, 7); /* untouched on error */
    EXPECT_OK(minlsh_siphash24(&out, key, NULL, 0));
    EXPECT_EQ_U64(out, vec64[0]);
    EXPECT_ERR(minlsh_siphash24_128(NULL, key, "a", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_siphash24_128(out16, NULL, "a", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_siphash24_128(out16, key, NULL, 1), MINLSH_E_NULL);
    EXPECT_OK(minlsh_siphash24_128(out16, key, NULL, 0));
    {
        uint8_t want[16];
        unhex(want, vec128[0], 16);
        EXPECT(memcmp(out16, want, 16) == 0);
    }
}

/* The key matters in both halves, and the 128-bit tag's first half is not
 * the 64-bit tag (different initialisation). */
static void test_key_sensitivity(void) {
    uint8_t key[16] = {0}, t1[16], t2[16];
    uint64_t a, b;
    int i, same = 0;
    EXPECT_OK(minlsh_siphash24(&a, key, "abc", 3));
    for (i = 0; i < 128; i++) {
        key[i / 8] ^= (uint8_t)(1u << (i % 8));
        EXPECT_OK(minlsh_siphash24(&b, key, "abc", 3));
        same += a == b;
        key[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    EXPECT_EQ_INT(same, 0);
    EXPECT_OK(minlsh_siphash24_128(t1, key, "abc", 3));
    EXPECT(minlsh__load64le(t1) != a);
    EXPECT_OK(minlsh_siphash24_128(t2, key, "abd", 3));
    EXPECT(memcmp(t1, t2, 16) != 0);
}

int main(void) {
    RUN(test_vectors_64);
    RUN(test_vectors_128);
    RUN(test_vector_files);
    RUN(test_libsodium_agreement);
    RUN(test_incremental);
    RUN(test_null_handling);
    RUN(test_key_sensitivity);
    return TL_SUMMARY("siphash");
}
