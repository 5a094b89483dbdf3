#!/usr/bin/env bash
# test_makefile.sh: the Makefile's bookkeeping, in a build folder of its
# own, mostly with make -n and -q (nothing compiled): the flags stamp
# (BUILD/FLAGS) and what it makes stale.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$SCRATCH/build
# The make that runs these tests (make test) passes its flags and
# variables down in MAKEFLAGS; these makes are the Makefile's defaults.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" BUILD="$B" "$@"; }

# The stamp, written by its rule; then up to date for the same flags, and
# stale for others.
run mk -s "$B/FLAGS"
expect_status 0 "make BUILD/FLAGS writes the stamp"
stamp=$(cat "$B/FLAGS" 2>/dev/null)
if grep -qF -- "-std=c11" <<<"$stamp"; then ok "the stamp holds the compile flags"; else not_ok "the stamp holds the compile flags (it has '$stamp')"; fi
run mk -q "$B/FLAGS"
expect_status 0 "the stamp is up to date for the same flags"
run mk -q WERROR=1 "$B/FLAGS"
expect_status 1 "the stamp is stale for other flags"
for folder in CUPTI_LIBDIR CUDA_STUBS CUDA_LIBDIR; do
	run mk -q $folder=/elsewhere "$B/FLAGS"
	expect_status 1 "the stamp is stale for another $folder (the libraries link from it)"
done

# A stamp removed after the makefile was read, the flags being the same,
# is written again: make clean all stopped at "No rule to make target".
run mk -s clean "$B/FLAGS"
if [ "$status" -eq 0 ] && [ "$(cat "$B/FLAGS" 2>/dev/null)" = "$stamp" ]; then ok "make clean BUILD/FLAGS writes it again"
else not_ok "make clean BUILD/FLAGS writes it again (status $status: $err)"; fi

# A make that compiles nothing leaves it as it is: make test's own make
# (no WERROR) runs before its WERROR=1 build, which else compiled
# everything again each time; a dry run changes nothing.
mk -q OPT=-O0 deps >/dev/null 2>&1
mk -n WERROR=1 all >/dev/null 2>&1
if [ "$(cat "$B/FLAGS")" = "$stamp" ]; then ok "a make that compiles nothing leaves the stamp"; else not_ok "a make that compiles nothing leaves the stamp"; fi

# What is compiled with CFLAGS_ALL is stale when the flags change: here
# the PyTorch allocator, built straight from its source (not from an
# object), made as if built with these flags.
so=$B/examples/libmanaged_alloc.so
mkdir -p "$B/examples" && touch "$so"
run mk -q "$so"
expect_status 0 "libmanaged_alloc.so is up to date for the same flags"
run mk -q OPT=-O0 "$so"
expect_status 1 "libmanaged_alloc.so is stale for other flags"

# A unit test is compiled with -MMD -MP, and the header list that writes
# (BUILD/tests/test_*.d) is read: a header it names, newer than the test,
# makes the test stale. The libraries are taken as built (make -o).
t=$B/tests/test_common
libs_built=()
for m in common record plan replay; do libs_built+=(-o "$B/lib/libumkit_$m.a"); done
run mk -n "${libs_built[@]}" "$t"
if grep -- "-o $t " <<<"$out" | grep -q -- "-MMD -MP"; then ok "a unit test is compiled with -MMD -MP"; else not_ok "a unit test is compiled with -MMD -MP"; fi
mkdir -p "$B/tests" && touch "$t"
run mk -q "${libs_built[@]}" "$t"
expect_status 0 "a unit test is up to date, its libraries built"
touch "$SCRATCH/included.h"
echo "$t: $SCRATCH/included.h" >"$t.d"
run mk -q "${libs_built[@]}" "$t"
expect_status 1 "a unit test is stale when a header its .d names changes"

# A bench program made from a pattern's object is up to date without the
# object (an intermediate), though its .d file names it, as the first
# build leaves it: else every second make built it again.
bp=$B/bench/alloc_path
mkdir -p "$B/bench" "$B/obj/bench"
echo "$B/obj/bench/alloc_path.o: bench/alloc_path.c" >"$B/obj/bench/alloc_path.d"
touch "$bp"
run mk -q "${libs_built[@]}" "$bp"
expect_status 0 "a bench program is up to date without the object its .d names"

# make test's two builds run a job per core (CI runs a plain make test),
# unless make was given a -j of its own, which they follow: -j1 builds one
# file at a time. make -n shows the builds' makes (run, as -n too).
builds_with() { grep -E '^make .*WERROR=1' <<<"$out" | grep -cE -- "$1"; }
run mk -n test
if [ "$(builds_with " -j$(nproc) ")" -eq 2 ]; then ok "make test's builds run a job per core"
else not_ok "make test's builds run a job per core (-j$(nproc))"; fi
run mk -n -j1 test
if [ "$(builds_with "^make ")" -eq 2 ] && [ "$(builds_with " -j")" -eq 0 ]; then ok "make -j1 test's builds take its -j"
else not_ok "make -j1 test's builds take its -j"; fi

# CUPTI_LIBDIR names a folder: by default the one with libcupti.so, and
# as given, from the command line or the environment, in the link too.
var() { mk -s --eval 'print-%: ; @echo $($*)' "${@:2}" "print-$1"; }
dir=$(var CUPTI_LIBDIR)
if [ -n "$dir" ] && [ -e "$dir/libcupti.so" ]; then ok "CUPTI_LIBDIR is the folder with libcupti.so"; else not_ok "CUPTI_LIBDIR is the folder with libcupti.so (it is '$dir')"; fi
for how in "command line" environment; do
	if [ "$how" = environment ]; then
		got=$(CUPTI_LIBDIR=/opt/cupti/lib64 var CUPTI_LIBDIR); link=$(CUPTI_LIBDIR=/opt/cupti/lib64 var LDLIBS_CUDA)
	else
		got=$(var CUPTI_LIBDIR CUPTI_LIBDIR=/opt/cupti/lib64); link=$(var LDLIBS_CUDA CUPTI_LIBDIR=/opt/cupti/lib64)
	fi
	if [ "$got" = /opt/cupti/lib64 ] && grep -qF -- "-L/opt/cupti/lib64 " <<<"$link"; then
		ok "CUPTI_LIBDIR from the $how is the folder linked from"
	else
		not_ok "CUPTI_LIBDIR from the $how is the folder linked from (it is '$got'; link: $link)"
	fi
done
got=$(var CUPTI_LIBDIR CUDA_HOME="$SCRATCH/no-cuda")
if [ "$got" = "$SCRATCH/no-cuda/lib64" ]; then ok "CUPTI_LIBDIR without a libcupti.so is CUPTI_HOME/lib64"; else not_ok "CUPTI_LIBDIR without a libcupti.so is CUPTI_HOME/lib64 (it is '$got')"; fi

# The README's table has every variable that says where CUDA's parts are.
vars=$(grep -oE '^(CUDA|CUPTI)_[A-Z]+ \?=' "$ROOT/Makefile" | cut -d' ' -f1)
[ "$(wc -w <<<"$vars")" -ge 5 ] || not_ok "the Makefile's CUDA variables are found (found: $vars)"
for v in $vars; do
	if grep -qF -- "| \`$v\` |" "$ROOT/README.md"; then ok "README documents $v"; else not_ok "README documents $v"; fi
done
finish
