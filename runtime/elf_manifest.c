/* elf_manifest.c - finds the manifest embedded in a cubin without a GPU.
 *
 * A cubin is an ELF64 little-endian file.  The generated CUDA defines
 *   extern "C" __device__ const unsigned char bgnn_manifest[];   (bytes of the manifest)
 *   extern "C" __device__ const <integer> bgnn_manifest_len;     (its length)
 * which NVRTC places in an initialised data section (.nv.global.init) with symbols in
 * .symtab whose st_value is section relative.  The input is hostile: every header field,
 * table offset, entry size, string index and symbol extent is checked against the file
 * length before it is read, with overflow-safe arithmetic; the first problem is one
 * E_MANIFEST (or E_FORMAT for a file that is not a cubin) diagnostic naming the file. */
#include "rt.h"

#include <string.h>

enum { EHDR = 64, SHDR = 64, SYM = 24, SHT_SYMTAB = 2, SHT_NOBITS = 8 };

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* [off, off + n) lies inside a file of len bytes. */
static bool in_file(uint64_t off, uint64_t n, size_t len) {
    return off <= (uint64_t)len && n <= (uint64_t)len - off;
}

typedef struct Sect {
    uint32_t type, link;
    uint64_t addr, off, size, entsize;
} Sect;

static bool sect(const unsigned char *img, size_t len, uint64_t shoff, uint32_t i, uint32_t shnum,
                 Sect *s) {
    if (i >= shnum) return false;
    const unsigned char *h = img + shoff + (uint64_t)i * SHDR;
    s->type = rd32(h + 4);
    s->addr = rd64(h + 16);
    s->off = rd64(h + 24);
    s->size = rd64(h + 32);
    s->link = rd32(h + 40);
    s->entsize = rd64(h + 56);
    return s->type == SHT_NOBITS || in_file(s->off, s->size, len);
}

/* Is the NUL-terminated name at strtab[idx] equal to want (without reading past it)? */
static bool name_is(const unsigned char *img, const Sect *strtab, uint32_t idx, const char *want) {
    size_t wl = strlen(want);
    if ((uint64_t)idx >= strtab->size || wl + 1 > strtab->size - idx) return false;
    const unsigned char *p = img + strtab->off + idx;
    return memcmp(p, want, wl) == 0 && p[wl] == 0;
}

/* The bytes of symbol sym (a file range), checked. */
static bool sym_bytes(const unsigned char *img, size_t len, uint64_t shoff, uint32_t shnum,
                      const unsigned char *sym, uint64_t *off, uint64_t *size) {
    uint16_t shndx = rd16(sym + 6);
    uint64_t value = rd64(sym + 8), sz = rd64(sym + 16);
    Sect s;
    if (shndx == 0 || shndx >= 0xff00 || !sect(img, len, shoff, shndx, shnum, &s)) return false;
    if (s.type == SHT_NOBITS) return false;
    /* cubin symbols are section relative; tolerate absolute ones (value >= sh_addr). */
    uint64_t rel = value;
    if (s.addr && value >= s.addr) rel = value - s.addr;
    if (rel > s.size || sz > s.size - rel) return false;
    *off = s.off + rel;
    *size = sz;
    return in_file(*off, *size, len);
}

bool bg_elf_find_manifest(const unsigned char *img, size_t len, const char *what,
                          const unsigned char **bytes, size_t *n, BgDiagSink *d) {
    *bytes = NULL;
    *n = 0;
    if (len < EHDR || memcmp(img, "\x7f" "ELF", 4) != 0) {
        bg_diag_error(d, BG_E_FORMAT, "%s: not a cubin (%s)", what,
                      len < 4 ? "file too short" : "no ELF magic");
        return false;
    }
    if (img[4] != 2 || img[5] != 1) {
        bg_diag_error(d, BG_E_FORMAT, "%s: not a cubin (ELF class %d, data encoding %d; want 64-bit little-endian)",
                      what, img[4], img[5]);
        return false;
    }
    uint64_t shoff = rd64(img + 40);
    uint16_t shentsize = rd16(img + 58), shnum = rd16(img + 60);
    if (shentsize != SHDR || shnum == 0 || !in_file(shoff, (uint64_t)shnum * SHDR, len)) {
        bg_diag_error(d, BG_E_FORMAT,
                      "%s: truncated or corrupt cubin (section table at %llu, %u entries of %u bytes, file %zu bytes)",
                      what, (unsigned long long)shoff, shnum, shentsize, len);
        return false;
    }
    const unsigned char *msym = NULL, *lsym = NULL;
    bool bad_table = false;
    for (uint32_t i = 0; i < shnum && !msym; i++) {
        Sect st, str;
        if (!sect(img, len, shoff, i, shnum, &st)) {
            bad_table = true;
            continue;
        }
        if (st.type != SHT_SYMTAB) continue;
        if (st.entsize != SYM || st.size % SYM || !sect(img, len, shoff, st.link, shnum, &str) ||
            str.type == SHT_NOBITS) {
            bad_table = true;
            continue;
        }
        for (uint64_t k = 0; k < st.size / SYM; k++) {
            const unsigned char *s = img + st.off + k * SYM;
            uint32_t nm = rd32(s);
            if (name_is(img, &str, nm, "bgnn_manifest") || name_is(img, &str, nm, "bgnnc_manifest"))
                msym = s;
            else if (name_is(img, &str, nm, "bgnn_manifest_len") ||
                     name_is(img, &str, nm, "bgnnc_manifest_len"))
                lsym = s;
        }
    }
    if (!msym) {
        bg_diag_error(d, BG_E_MANIFEST, "%s: %s", what,
                      bad_table ? "truncated or corrupt cubin (a section lies outside the file)"
                                : "no bgnn manifest in this cubin (not built by bgnnc?)");
        return false;
    }
    uint64_t moff, msize;
    if (!sym_bytes(img, len, shoff, shnum, msym, &moff, &msize)) {
        bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest symbol points outside its section or the file", what);
        return false;
    }
    if (lsym) {
        uint64_t loff, lsize, mlen;
        if (!sym_bytes(img, len, shoff, shnum, lsym, &loff, &lsize) || (lsize != 4 && lsize != 8)) {
            bg_diag_error(d, BG_E_MANIFEST, "%s: bad bgnn_manifest_len symbol", what);
            return false;
        }
        mlen = lsize == 4 ? rd32(img + loff) : rd64(img + loff);
        if (mlen > msize) {
            bg_diag_error(d, BG_E_MANIFEST, "%s: manifest length %llu exceeds its array (%llu bytes)",
                          what, (unsigned long long)mlen, (unsigned long long)msize);
            return false;
        }
        msize = mlen;
    }
    *bytes = img + moff;
    *n = (size_t)msize;
    return true;
}
