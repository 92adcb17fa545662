#!/usr/bin/env bash
# setup_fuzz.sh - what the reliability stages of .ci/run need beyond tools/setup.sh, on a
# fresh Debian machine: clang with libFuzzer and the sanitizer runtimes (the BGNN_FUZZ=ON
# build, tests/fuzz) and valgrind.  Checks by doing (a -fsanitize=fuzzer link), installs only
# what is missing.  docs/reliability.md.
set -euo pipefail
need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
fuzz_links() {
  command -v clang >/dev/null 2>&1 || return 1
  local t
  t=$(mktemp -d)
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$t/f.c"
  local rc=0
  clang -fsanitize=fuzzer,address,undefined "$t/f.c" -o "$t/f" >/dev/null 2>&1 || rc=1
  rm -rf "$t"
  return $rc
}
if ! fuzz_links; then
  need+=(libclang-rt-dev) # Debian: libFuzzer + ASan/UBSan runtimes for the default clang
fi
if [ ${#need[@]} -gt 0 ]; then
  "$(dirname "$0")/setup.sh" "${need[@]}"   # the one apt-get path (root or sudo)
fi
fuzz_links || { echo "setup_fuzz: clang -fsanitize=fuzzer still does not link" >&2; exit 1; }
