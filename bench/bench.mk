# `make bench`: the performance benchmark (bench/bench.py); not part of
# `make check`.  It installs what it needs, builds ddup-check and the floor
# program in build/bench, starts nginx and BIND on loopback, prints a table.
#   make bench BENCH_ARGS="--sizes 1000 --runs 7 --state-runs 0"

BENCH_DEBS = nginx libnginx-mod-http-echo curl bind9 bind9-utils bind9-dnsutils \
	   python3 python3-pytest time
BENCH_O	 = build/bench

.PHONY: bench bench-deps

bench-deps:
	$(call deps,$(BUILD_DEBS) $(BENCH_DEBS))

$(BENCH_O)/floor: bench/floor.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) \
	    -o $@ bench/floor.c $(LDFLAGS) $(shell pkg-config --libs libcurl)

bench: bench-deps
	$(MAKE) O=$(BENCH_O) $(BENCH_O)/ddup-check $(BENCH_O)/floor
	$(PYTHON) bench/bench.py --ddup $(CURDIR)/$(BENCH_O)/ddup-check \
	    --floor $(CURDIR)/$(BENCH_O)/floor $(BENCH_ARGS)
