# ddup-check: plain make, libraries from pkg-config.
#
#   make            build ./ddup-check
#   make check      install what is missing, build, run every test (the
#                   integration tests with a SQLite state, then again with
#                   a PostgreSQL one; also under AddressSanitizer +
#                   UndefinedBehaviorSanitizer; valgrind over the unit
#                   tests and test_run.py)
#   make check-full make check, with valgrind over every integration test
#   make check-loaded make check with two CPU-bound processes beside it
#   make demo       install what is missing, build, show a real failover
#   make CC=clang   the same with clang
#   make install    install under PREFIX (/usr/local), DESTDIR, SYSCONFDIR
#   make uninstall  remove what make install put there
#   make deb        a Debian package in build/deb/ (dpkg-buildpackage)
#
# Objects go to $(O) so the sanitizer build lives beside the normal one.

CC	?= cc
O	?= build
PKGS	 = libcurl inih sqlite3 ldns jansson libcrypto libpq libxml-2.0
PYTHON	?= /usr/bin/python3

WARN	 = -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wpointer-arith
CFLAGS	?= -O2 -g
DDUP_CPPFLAGS = -D_DEFAULT_SOURCE -I.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libpq and libxml2 are not linked but loaded at first use (lazylib.h),
# by the sonames of the libraries found here.
LAZY_PKGS  = libpq libxml-2.0
PKG_LIBS   = $(shell pkg-config --libs $(filter-out $(LAZY_PKGS),$(PKGS)) 2>/dev/null)
soname	   = $(shell objdump -p "$$($(CC) -print-file-name=$(1))" 2>/dev/null | \
	     sed -n 's/^ *SONAME *//p')
LAZY_CPPFLAGS = -DLAZYLIB_PQ='"$(call soname,libpq.so)"' \
	     -DLAZYLIB_XML='"$(call soname,libxml2.so)"'

# Sources by folder, as curl lists lib/: the core here, each family of
# backends in its own folder with its own list (FOLDER/Makefile.inc).
CORE_SRCS = util.c log.c config.c config_problem.c config_keys.c config_read.c \
	   config_value.c config_value_check.c config_build.c config_build_policy.c config_build_state.c \
	   config_build_provider.c config_build_notify.c config_build_domain.c \
	   config_build_endpoint.c \
	   config_digest.c check.c decide.c outcome.c status.c dashboard.c dashboard_text.c dashboard_timeline.c \
	   metrics.c publish.c outbox.c save.c run.c recheck.c request.c proc.c proc_sig.c proc_run.c rrset.c http.c \
	   provider.c notify.c vote.c pguri.c redact.c lazylib.c
STATE_SRCS = state.c
include state/Makefile.inc
include providers/Makefile.inc
include check/Makefile.inc
SRCS	 = $(CORE_SRCS) $(CHECK_SRCS) $(STATE_SRCS) $(PROVIDER_SRCS)
OBJS	 = $(SRCS:%.c=$(O)/%.o)
# Each object depends on the headers it includes, as the compiler found
# them (-MMD); -MP keeps a removed header from breaking the next build.
DEPFLAGS = -MMD -MP

UNIT	 = test_util test_config test_config_checks test_decide test_outcome test_state test_http test_doc test_dashboard test_dashboard_timeline \
	   test_vote test_pguri test_notify test_cert test_prog test_tcp test_zonefile test_webhook
UNITBIN	 = $(UNIT:%=$(O)/tests/%)

# Debian packages: to build, to test, and for the demo.  debian/control's
# Build-Depends are BUILD_DEBS but build-essential and clang (a test
# compares them).  systemd: the package's user (systemd-sysusers) and
# its folder (systemd-tmpfiles) when the package test installs it.
BUILD_DEBS = build-essential pkg-config clang libcurl4-openssl-dev libinih-dev \
	   libsqlite3-dev libldns-dev libjansson-dev libssl-dev libxml2-dev libpq-dev
TEST_DEBS  = libcmocka-dev libclang-rt-14-dev valgrind cppcheck clang-tidy python3-pytest python3-pytest-xdist bind9 bind9-utils bind9-dnsutils \
	   pdns-server pdns-backend-sqlite3 nsd knot sqlite3 openssl ca-certificates \
	   postgresql chromium prometheus python3-botocore mandoc lintian debhelper systemd shellcheck \
	   stress-ng monitoring-plugins-basic monitoring-plugins-standard nftables iproute2 pgbouncer
# Node.js for Prism (below), only when npm is missing: a machine may have
# its own Node.js build, which Debian's npm package would fight.
NODE_DEBS  = nodejs npm
DEMO_DEBS  = bind9 bind9-utils bind9-dnsutils python3 python3-pytest openssl sqlite3

# Integration tests: processes for the parallel pass (tests/pytest-passes).
PYTEST_JOBS ?= 2
# The integration tests that run under valgrind: in make check one file
# that goes through checks, the state file and a real provider; in
# make check-full (VALGRIND_TESTS=) all of them.
VALGRIND_TESTS ?= test_run.py

.PHONY: all clean install uninstall deb check-package check check-full check-loaded check-deps demo demo-deps unit integration \
	integration-pg check-asan check-valgrind lint include-graph prism node-deps

all: ddup-check

ddup-check: $(O)/ddup-check
	cp $(O)/ddup-check $@

$(O)/ddup-check: $(O)/ddup-check.o $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(O)/lazylib.o: DDUP_CPPFLAGS += $(LAZY_CPPFLAGS)

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(DEPFLAGS) $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(O)/tests/%: tests/unit/%.c $(OBJS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $(DEPFLAGS) -MF $@.d $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) \
	    -o $@ $< $(OBJS) $(PKG_LIBS) -lcmocka

-include $(OBJS:.o=.d) $(O)/ddup-check.d $(UNITBIN:=.d)

# Installs only what is missing, without questions (CI runs as root).
deps = @missing=""; for p in $(1); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    $$SUDO apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

check-deps:
	$(call deps,$(BUILD_DEBS) $(TEST_DEBS))
	@command -v npm >/dev/null || $(MAKE) --no-print-directory node-deps

node-deps:
	$(call deps,$(NODE_DEBS))

demo-deps:
	$(call deps,$(BUILD_DEBS) $(DEMO_DEBS))

unit: $(UNITBIN)
	@for t in $(UNITBIN); do echo "== $$t"; $$t || exit 1; done

# Stoplight Prism checks every request of the Cloudflare tests, and every
# answer of their fake, against Cloudflare's OpenAPI schema
# (tests/integration/cloudflarefix.py).  npm installs it under build/ when
# it is missing; the version is pinned so a run is repeatable.
PRISM_VERSION = 5.14.2
PRISM	 = build/prism/node_modules/.bin/prism
prism: $(PRISM)
$(PRISM):
	@command -v npm >/dev/null || $(MAKE) --no-print-directory node-deps
	npm install --prefix build/prism --no-audit --no-fund --no-save \
	    @stoplight/prism-cli@$(PRISM_VERSION)
	@test -x $@

# Two passes: the tests not marked serial on $(PYTEST_JOBS) processes, then
# the serial ones alone (tests/pytest-passes says why).
integration: $(O)/ddup-check $(PRISM)
	cd tests/integration && DDUP_CHECK=$(CURDIR)/$(O)/ddup-check PYTHON=$(PYTHON) \
	    sh ../pytest-passes $(PYTEST_JOBS) $(PYTEST_ARGS)

# The same suite with a PostgreSQL state (a fresh database per test, one
# checker) instead of the SQLite file; the tests about the file itself
# (marked sqlite_file) are skipped and those that use no state left out
# (tests/integration/conftest.py).  make check runs it on the gcc build
# only, not under the sanitizers or valgrind: that would double their time.
integration-pg: $(O)/ddup-check $(PRISM)
	cd tests/integration && DDUP_TEST_STATE=postgresql \
	    DDUP_CHECK=$(CURDIR)/$(O)/ddup-check PYTHON=$(PYTHON) \
	    sh ../pytest-passes $(PYTEST_JOBS) $(PYTEST_ARGS)

# The whole suite, with gcc, then clang under ASan + UBSan; each phase
# says how long it took (tests/phase).  Builds use both cores; the tests
# of a phase run one after the other (unit, then integration).
check: check-deps
	@sh tests/phase lint $(MAKE) lint
	@sh tests/phase gcc sh -c '$(MAKE) -j2 CC=gcc O=build all $(UNITBIN) && \
	    $(MAKE) CC=gcc O=build unit integration'
	@sh tests/phase gcc-postgresql $(MAKE) CC=gcc O=build integration-pg
	@sh tests/phase asan $(MAKE) check-asan
	@sh tests/phase valgrind $(MAKE) check-valgrind VALGRIND_TESTS="$(VALGRIND_TESTS)"
	@sh tests/phase fuzz-smoke $(MAKE) -j2 -Otarget fuzz-smoke
	@sh tests/phase package $(MAKE) check-package

# make check on a loaded machine: two CPU-bound processes (stress-ng)
# beside it the whole time, as on a shared CI host.  Every timed or
# ordering-sensitive test must pass this way too.
LOAD_CPUS ?= 2
check-loaded: check-deps
	@stress-ng --cpu $(LOAD_CPUS) --cpu-method matrixprod -q & pid=$$!; \
	    $(MAKE) check; rc=$$?; kill $$pid; wait $$pid 2>/dev/null; exit $$rc

# make check with every integration test under valgrind as well.
check-full:
	$(MAKE) check VALGRIND_TESTS=

ASAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer
# Reports go to files as well as failing the process, so a report from a
# run whose exit status a test does not look at still fails the suite.
SAN_DIR	 = $(CURDIR)/build/asan/reports
check-asan:
	rm -rf $(SAN_DIR) && mkdir -p $(SAN_DIR)
	ASAN_OPTIONS=detect_leaks=1:exitcode=99:log_path=$(SAN_DIR)/asan \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98:log_path=$(SAN_DIR)/ubsan \
	    sh -c '$(MAKE) -j2 CC=clang O=build/asan CFLAGS="$(ASAN_FLAGS)" \
	    LDFLAGS="-fsanitize=address,undefined" build/asan/ddup-check \
	    $(UNIT:%=build/asan/tests/%) && \
	    $(MAKE) CC=clang O=build/asan CFLAGS="$(ASAN_FLAGS)" \
	    LDFLAGS="-fsanitize=address,undefined" unit integration'
	@if [ -n "$$(ls -A $(SAN_DIR))" ]; then \
	    cat $(SAN_DIR)/*; echo "sanitizer reports: see above"; exit 1; \
	fi
	@echo "sanitizers: 0 reports"

# Static analysis: cppcheck and clang-tidy (its check set, and why, in
# .clang-tidy), one translation unit at a time; any finding fails.
# cppcheck's variableScope is left out: declarations stand at the top of
# a function here, as in OpenBSD's style.
LINT_SRCS = $(SRCS) ddup-check.c
# Both use both cores (LINT_JOBS); a file's clang-tidy output is printed
# whole, only when it reports something.
LINT_JOBS ?= 2
lint: include-graph
	cppcheck -q -j $(LINT_JOBS) --enable=warning,style,performance,portability --std=c11 \
	    -D_DEFAULT_SOURCE -I. --suppress=variableScope --inline-suppr \
	    --error-exitcode=1 $(LINT_SRCS)
	@printf '%s\n' $(LINT_SRCS) | xargs -P $(LINT_JOBS) -n 1 sh -c \
	    'out=$$(clang-tidy --quiet "$$0" -- -std=c11 $(DDUP_CPPFLAGS) \
	    $(PKG_CFLAGS) 2>&1) || { echo "$$out"; exit 1; }'
	@echo "lint: cppcheck and clang-tidy report nothing"

# No include circle among the sources (tests/include-graph says how it
# reads the uses off the objects).
include-graph: $(O)/ddup-check
	$(PYTHON) tests/include-graph $(O) $(LINT_SRCS)

# The gcc build once more, every process under valgrind memcheck: zero
# errors and zero definite leaks, or the suite fails.  The unit tests and
# $(VALGRIND_TESTS) (empty: every integration test).
VG_DIR	 = $(CURDIR)/build/valgrind
check-valgrind: $(O)/ddup-check $(UNITBIN) $(PRISM)
	rm -rf $(VG_DIR) && mkdir -p $(VG_DIR)
	@for t in $(UNITBIN); do echo "== valgrind $$t"; \
	    valgrind -q --error-exitcode=97 --leak-check=full \
	    --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	    --log-file=$(VG_DIR)/unit.%p $$t \
	    || exit 1; done
	cd tests/integration && DDUP_VALGRIND_LOGS=$(VG_DIR) \
	    DDUP_VALGRIND_BIN=$(CURDIR)/$(O)/ddup-check DDUP_TIME_SCALE=4 \
	    DDUP_CHECK=$(CURDIR)/tests/valgrind-run PYTHON=$(PYTHON) \
	    sh ../pytest-passes $(PYTEST_JOBS) $(VALGRIND_TESTS) $(PYTEST_ARGS)
	@if grep -l . $(VG_DIR)/* >/dev/null 2>&1; then \
	    grep -h . $(VG_DIR)/*; echo "valgrind: errors, see above"; exit 1; \
	fi
	@echo "valgrind: 0 errors, 0 definite leaks in $$(ls $(VG_DIR) | wc -l) processes"

# Installation.  The units get the installed binary's path and the
# configuration's folder; the example becomes the configuration only
# where there is none (an operator's file is never overwritten), and
# uninstall removes it only while it is still the unchanged example.
# Without DESTDIR, install also creates the ddup user and its folder
# (systemd-sysusers, systemd-tmpfiles) where systemd is present.
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
DOCDIR	?= $(PREFIX)/share/doc/ddup
SYSCONFDIR ?= /etc
UNITDIR	?= $(PREFIX)/lib/systemd/system
# systemd-sysusers and systemd-tmpfiles do not read /usr/local.
SYSUSERSDIR ?= $(SYSCONFDIR)/sysusers.d
TMPFILESDIR ?= $(SYSCONFDIR)/tmpfiles.d
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL	?= install
# no: leave the configuration out (the Debian package ships only the example)
INSTALL_CONFIG ?= yes
# What the units and the cron line say before make install rewrites them.
UNIT_SED = -e 's|/usr/local/bin/ddup-check|$(BINDIR)/ddup-check|g' \
	   -e 's|/etc/ddup/|$(SYSCONFDIR)/ddup/|g'

install: $(O)/ddup-check
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR)/examples \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
	    $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/ddup
	$(INSTALL) -m 0755 $(O)/ddup-check $(DESTDIR)$(BINDIR)/ddup-check
	$(INSTALL) -m 0644 doc/ddup-check.8 $(DESTDIR)$(MANDIR)/man8/ddup-check.8
	$(INSTALL) -m 0644 doc/ddup.ini.5 $(DESTDIR)$(MANDIR)/man5/ddup.ini.5
	$(INSTALL) -m 0644 ddup.ini.example $(DESTDIR)$(DOCDIR)/examples/ddup.ini.example
	sed $(UNIT_SED) cron.example > $(DESTDIR)$(DOCDIR)/examples/cron.example
	chmod 0644 $(DESTDIR)$(DOCDIR)/examples/cron.example
	for u in ddup-check.service ddup-check.timer; do \
	    sed $(UNIT_SED) $$u > $(DESTDIR)$(UNITDIR)/$$u && \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	$(INSTALL) -m 0644 ddup.sysusers $(DESTDIR)$(SYSUSERSDIR)/ddup.conf
	$(INSTALL) -m 0644 ddup.tmpfiles $(DESTDIR)$(TMPFILESDIR)/ddup.conf
	$(INSTALL) -m 0644 completion/ddup-check $(DESTDIR)$(BASHCOMPDIR)/ddup-check
	@if [ "$(INSTALL_CONFIG)" = no ]; then :; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini ]; then \
	    echo "$(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini exists: left as it is"; \
	else \
	    $(INSTALL) -m 0640 ddup.ini.example $(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini && \
	    echo "$(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini: the example, to edit"; \
	fi
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
	    systemd-sysusers $(SYSUSERSDIR)/ddup.conf && \
	    systemd-tmpfiles --create $(TMPFILESDIR)/ddup.conf && \
	    chgrp ddup $(SYSCONFDIR)/ddup/ddup.ini; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ddup-check $(DESTDIR)$(MANDIR)/man8/ddup-check.8 \
	    $(DESTDIR)$(MANDIR)/man5/ddup.ini.5 \
	    $(DESTDIR)$(DOCDIR)/examples/ddup.ini.example \
	    $(DESTDIR)$(DOCDIR)/examples/cron.example \
	    $(DESTDIR)$(UNITDIR)/ddup-check.service \
	    $(DESTDIR)$(UNITDIR)/ddup-check.timer \
	    $(DESTDIR)$(SYSUSERSDIR)/ddup.conf $(DESTDIR)$(TMPFILESDIR)/ddup.conf \
	    $(DESTDIR)$(BASHCOMPDIR)/ddup-check
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null
	@if cmp -s ddup.ini.example $(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini; then \
	    rm -f $(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini; \
	    rmdir $(DESTDIR)$(SYSCONFDIR)/ddup 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini ]; then \
	    echo "$(DESTDIR)$(SYSCONFDIR)/ddup/ddup.ini was edited: kept"; \
	else \
	    rmdir $(DESTDIR)$(SYSCONFDIR)/ddup 2>/dev/null || true; \
	fi
	@echo "the ddup user and /var/lib/ddup (the state) are kept"

# The Debian package, built with Debian's tools from a copy of the tree in
# build/deb/src (dpkg-buildpackage writes the .deb beside the tree it
# builds, here build/deb/), then checked by lintian: an error or a
# warning not overridden with a reason in debian/ fails.
DEB_DIR	 = build/deb
deb:
	$(call deps,$(BUILD_DEBS) debhelper lintian)
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	if [ -d .git ] || [ -f .git ]; then \
	    git ls-files -z --cached --others --exclude-standard | \
	    grep -zv '^build/' | xargs -0 cp --parents -P -t $(DEB_DIR)/src; \
	else \
	    tar --exclude=./build -cf - . | tar -C $(DEB_DIR)/src -xf -; \
	fi
	rm -f $(DEB_DIR)/src/ddup-check
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning --display-info $(DEB_DIR)/*.changes
	@ls $(DEB_DIR)/*.deb

# The package test (tests/package): one package build, then its contents,
# a scratch install, and a real install and purge when run as root on a
# machine without ddup installed.
check-package: deb
	cd tests/package && DDUP_DEB_DIR=$(CURDIR)/$(DEB_DIR) \
	    $(PYTHON) -m pytest -q -p no:cacheprovider \
	    $${DDUP_JUNIT_DIR:+--junitxml=$$DDUP_JUNIT_DIR/package.xml} .

demo: demo-deps
	$(MAKE) all
	$(PYTHON) tests/demo.py $(CURDIR)/ddup-check

clean:
	rm -rf build ddup-check

include fuzz/fuzz.mk
include bench/bench.mk
