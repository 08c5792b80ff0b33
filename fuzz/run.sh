#!/bin/sh
# Runs one libFuzzer target on a copy of its committed corpus (the copy
# may grow; the committed one never does) and prints one line of figures.
# Fails on a crash, leak, timeout, broken invariant or sanitizer report.
#
#   fuzz/run.sh BINARY CORPUS WORKDIR [libFuzzer flags...]

set -u
if [ $# -lt 3 ]; then
	echo "usage: $0 BINARY CORPUS WORKDIR [libFuzzer flags...]" >&2
	exit 2
fi
bin=$1 corpus=$2 work=$3
shift 3
name=$(basename "$bin")

rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts" || exit 1
cp "$corpus"/* "$work/corpus/" || exit 1

start=$(date +%s)
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
    -timeout=25 "$@" "$work/corpus" >"$work/log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))

stat() {
	sed -n "s/^stat::$1: *//p" "$work/log" | tail -n 1
}
execs=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
rss=$(stat peak_rss_mb)
# The last status line: "#N DONE cov: C ft: F corp: ..."
cov=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 |
    sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1 ft \2 corpus \3/p')

if [ $rc -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ] ||
    grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|invariant broken' \
    "$work/log"; then
	tail -n 60 "$work/log"
	echo "$name: FAILED (exit $rc); input and log in $work"
	exit 1
fi
echo "$name: ${execs:-?} runs in ${secs}s, ${rate:-?} exec/s, ${cov:-no coverage line}, peak rss ${rss:-?} MB, 0 crashes"
