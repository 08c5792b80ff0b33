# libFuzzer targets (clang).  `make fuzz-smoke` runs each for a short
# while and is part of `make check`.
.PHONY: fuzz-smoke
fuzz-smoke:
	@echo "fuzz-smoke: no targets yet"
