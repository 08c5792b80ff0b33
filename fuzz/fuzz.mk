# libFuzzer targets (clang, Debian's libclang-rt-14-dev).
#
#   make fuzz              build every target into build/fuzz/
#   make fuzz-smoke        each target for FUZZ_SMOKE_TIME seconds (part of make check,
#                          there with -j2: two targets at a time)
#   make fuzz-long         each target for FUZZ_RUNS executions, niced
#   make fuzz-long FUZZ_TARGETS=dns FUZZ_RUNS=100000000
#
# A target runs on a copy of fuzz/corpus/<target>/ in build/fuzz/run/;
# a crash leaves its input there (minimised, it belongs in the corpus).
# To replay one input: build/fuzz/fuzz_<target> FILE.
#
# The modules are compiled again with coverage and sanitizers into
# build/fuzz/obj/ and gathered in an archive, so the main build is not
# touched and a target that includes a provider's source (to reach its
# static parsers) does not also pull in that provider's object.

FUZZ_CC		 = clang
FUZZ_O		 = build/fuzz
# A provider's target includes providers/NAME.c to reach its static
# parsers: name it here and it is built, smoked and run long like the rest.
FUZZ_PROVIDERS	 = powerdns azure ovh cloudflare exec desec gandi hetzner \
		   digitalocean route53 porkbun bunny
FUZZ_TARGETS	?= duration expect addr isotime url dns config dashboard pguri vote redact \
		   retryafter send certdate progline stream zonefile webhook \
		   $(FUZZ_PROVIDERS)
FUZZ_SMOKE_TIME	?= 10
FUZZ_RUNS	?= 10000000
FUZZ_NICE	?= nice -n 19
FUZZ_SAN	 = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS	 = -O1 -g -fno-omit-frame-pointer
FUZZ_OBJS	 = $(SRCS:%.c=$(FUZZ_O)/obj/%.o)
FUZZ_LIB	 = $(FUZZ_O)/libddup.a
FUZZ_BINS	 = $(FUZZ_TARGETS:%=$(FUZZ_O)/fuzz_%)
# Longest input per target: a value, a stored list, a document, a file.
FUZZ_MAXLEN_duration	 = 64
FUZZ_MAXLEN_expect	 = 256
FUZZ_MAXLEN_isotime	 = 64
FUZZ_MAXLEN_certdate	 = 64
FUZZ_MAXLEN_retryafter	 = 128
FUZZ_MAXLEN_url		 = 256
FUZZ_MAXLEN_send	 = 20000
FUZZ_MAXLEN_addr	 = 2048
FUZZ_MAXLEN_dns		 = 4096
FUZZ_MAXLEN_powerdns	 = 4096
FUZZ_MAXLEN_azure	 = 4096
FUZZ_MAXLEN_ovh	 = 4096
FUZZ_MAXLEN_config	 = 4096
FUZZ_MAXLEN_exec	 = 4096
FUZZ_MAXLEN_zonefile	 = 4096
FUZZ_MAXLEN_vote	 = 1024
FUZZ_MAXLEN_progline	 = 8192
# A text and more than CHECK_EXPECT_READ bytes of stream.
FUZZ_MAXLEN_stream	 = 8192
fuzz_maxlen = $(or $(FUZZ_MAXLEN_$(1)),4096)

.PHONY: fuzz fuzz-smoke fuzz-long

fuzz: $(FUZZ_BINS)

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(WARN) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJS)

$(FUZZ_O)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(WARN) $(FUZZ_CFLAGS) $(DEPFLAGS) -MF $@.d -fsanitize=fuzzer $(FUZZ_SAN) \
	    $(DDUP_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(FUZZ_LIB) \
	    $(PKG_LIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)

# A fixed seed: the gate in make check replays the same mutations each
# time, so a red run is a change in the code, not the luck of the draw;
# fuzz-long is where new ground is searched.
# One make target per fuzz target, so that `make -j2 fuzz-smoke` (as
# make check does) runs two at a time, each for the whole FUZZ_SMOKE_TIME
# on a core of its own.
FUZZ_SMOKE_SEED	?= 1
FUZZ_SMOKES	 = $(FUZZ_TARGETS:%=fuzz-smoke-%)
.PHONY: $(FUZZ_SMOKES)

fuzz-smoke: $(FUZZ_SMOKES)

$(FUZZ_SMOKES): fuzz-smoke-%: $(FUZZ_O)/fuzz_%
	@sh fuzz/run.sh $(FUZZ_O)/fuzz_$* fuzz/corpus/$* $(FUZZ_O)/run/smoke-$* \
	    -max_total_time=$(FUZZ_SMOKE_TIME) -seed=$(FUZZ_SMOKE_SEED) \
	    -max_len=$(call fuzz_maxlen,$*)

fuzz-long: $(FUZZ_BINS)
	@$(foreach t,$(FUZZ_TARGETS),$(FUZZ_NICE) sh fuzz/run.sh \
	    $(FUZZ_O)/fuzz_$(t) fuzz/corpus/$(t) $(FUZZ_O)/run/long-$(t) \
	    -runs=$(FUZZ_RUNS) -max_len=$(call fuzz_maxlen,$(t)) &&) true
