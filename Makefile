# Entry points for newcomers and CI. Everything else is meson + ninja under build*/.
BUILD ?= build

.PHONY: all deps build test demo bench clean

all: build

deps:
	./install-deps.sh

build: deps
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD)
	ninja -C $(BUILD)

test: deps
	tests/run.sh

demo: build
	scripts/demo.sh

bench: build
	bench/run.sh

clean:
	rm -rf build build-asan build-fuzz build-arm64
