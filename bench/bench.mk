# `make bench`: the performance benchmark; not part of `make check`.
.PHONY: bench
bench:
	@echo "bench: not written yet"
