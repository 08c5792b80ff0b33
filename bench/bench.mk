# `make bench`: the performance benchmark (bench/bench.py); not part of
# `make check`.  It installs what it needs, builds ddup-check and the floor
# program in build/bench, starts nginx, BIND and PostgreSQL on loopback,
# prints the tables.
#   make bench BENCH_ARGS="--sizes 1000 --runs 7 --state-runs 0"
#   make bench BENCH_ARGS="--sizes '' --no-slow --state-runs 0 --pg-sizes 1000"
#                       the PostgreSQL row alone (three checkers; as root)
#   make bench-state    the state file's size and writes over 1,000 runs

BENCH_DEBS = nginx libnginx-mod-http-echo curl bind9 bind9-utils bind9-dnsutils \
	   python3 python3-pytest time postgresql
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

# The state file over many runs without checks (bench/state_drive.c):
# 1,000 runs at N = 1,000 and 10,000, steady and with 10% of the
# endpoints changing result every run, latency as on loopback and
# jittered.  `make bench-state STATE_RUNS=100` for a shorter one.
STATE_RUNS ?= 1000

.PHONY: bench-state
bench-state: $(BENCH_O)/state-drive
	@d=$$(mktemp -d) && for spec in "1000 0 loop" "10000 0 loop" \
	    "1000 10 loop" "10000 10 loop" "1000 0 jitter" "10000 0 jitter"; do \
	    set -- $$spec; echo "load average: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	    $(BENCH_O)/state-drive $$d/s.db $$1 $(STATE_RUNS) $$2 1 $$3 2>/dev/null \
	    || exit 1; rm -f $$d/s.db*; done; rm -rf $$d

$(BENCH_O)/state-drive: bench/state_drive.c $(filter-out $(BENCH_O)/run.o,$(OBJS:$(O)/%=$(BENCH_O)/%))
	$(CC) $(WARN) $(CFLAGS) $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) \
	    -o $@ $^ $(LDFLAGS) $(PKG_LIBS)

# `make bench-failover`: how long a dead server stays in DNS
# (bench/failover.py): BIND on loopback, a scheduler starting ddup-check
# every interval as a systemd timer does, the published endpoint made to
# fail (503, hang) at a random moment; p50, p95 and max beside the bound,
# for recheck = 0 and 1s.  About 10 minutes (the cases run side by side).
#   make bench-failover BENCH_FAILOVER_ARGS="--trials 12 --cases 503 --recheck 0"
#   make bench-failover BENCH_FAILOVER_ARGS=--cost   a steady run's cost at N = 1,000,
#                       the four check types mixed against HTTP alone
BENCH_FAILOVER_DEBS = bind9 bind9-utils bind9-dnsutils nginx openssl time python3 python3-pytest

.PHONY: bench-failover
bench-failover:
	$(call deps,$(BUILD_DEBS) $(BENCH_FAILOVER_DEBS))
	$(MAKE) O=$(BENCH_O) $(BENCH_O)/ddup-check
	$(PYTHON) bench/failover.py --ddup $(CURDIR)/$(BENCH_O)/ddup-check $(BENCH_FAILOVER_ARGS)
