/* test_sha256.c - SHA-256 against the FIPS 180-4 / NIST example vectors, and streaming
 * updates in odd chunk sizes against one-shot hashing. */
#include "bgtest.h"
#include "gpu.h"

static void check_vec(const char *msg, size_t len, const char *want) {
    char hx[65];
    bg_sha256_hex(msg, len, hx);
    CHECK(strcmp(hx, want) == 0);
    if (strcmp(hx, want) != 0) fprintf(stderr, "  got %s\n want %s\n", hx, want);
}

int main(void) {
    check_vec("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_vec("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_vec(m2, strlen(m2),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m3 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check_vec(m3, strlen(m3),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

    /* one million 'a', fed in chunks of 1000 */
    {
        char chunk[1000];
        memset(chunk, 'a', sizeof chunk);
        BgSha256 s;
        bg_sha256_init(&s);
        for (int i = 0; i < 1000; i++) bg_sha256_update(&s, chunk, sizeof chunk);
        uint8_t h[32];
        char hx[65];
        bg_sha256_final(&s, h);
        bg_hex(h, 32, hx);
        CHECK(strcmp(hx, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") ==
              0);
    }

    /* streaming == one shot for every length around the padding boundaries, with
     * irregular chunking */
    unsigned long long seed = 12345;
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)bg_test_rand(&seed);
    int mismatches = 0;
    for (size_t len = 0; len <= sizeof buf; len++) {
        uint8_t a[32], b[32];
        bg_sha256(buf, len, a);
        BgSha256 s;
        bg_sha256_init(&s);
        size_t off = 0;
        while (off < len) {
            size_t take = 1 + (size_t)(bg_test_rand(&seed) % 70);
            if (take > len - off) take = len - off;
            bg_sha256_update(&s, buf + off, take);
            off += take;
        }
        bg_sha256_final(&s, b);
        mismatches += memcmp(a, b, 32) != 0;
    }
    CHECK_EQ_INT(mismatches, 0);

    /* bg_hex */
    uint8_t bytes[3] = {0x00, 0xab, 0xff};
    char hx[7];
    CHECK(strcmp(bg_hex(bytes, 3, hx), "00abff") == 0);
    return bg_test_finish();
}
