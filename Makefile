# cordon: top-level entry points (see README.md). The build itself is meson.
BUILD ?= build
ASAN_BUILD ?= build-asan
MESON ?= meson

.PHONY: all deps demo install test test-oci test-vm test-sanitize analyze depgraph bench fuzz clean deb test-deb

all: $(BUILD)/build.ninja
	@ninja -C $(BUILD) --quiet

$(BUILD)/build.ninja:
	@$(MESON) setup $(BUILD) >/dev/null

deps:
	@sh scripts/deps.sh

demo: deps all
	@BUILD=$(BUILD) sh examples/demo.sh

# The programs, the library, its header and cordon.pc, the TLS module and the
# man pages, under meson's prefix (default /usr/local); DESTDIR=DIR stages
# them below DIR.
install: all
	@$(MESON) install -C $(BUILD) --no-rebuild --quiet $(if $(DESTDIR),--destdir "$(DESTDIR)")

test: deps all
	@bash tests/run.sh $(BUILD)

# The engine tests (podman and containerd's ctr, tests/oci/engines.sh) against
# crun and build/cordon-oci, cordon-oci's lifecycle, runtime-spec, layers and
# egress tests (tests/oci/run-files.sh, about two minutes), then the OCI runtime-tools
# validation suite (built offline once per recipe into /var/cache/cordon-oci
# by scripts/oci-setup.sh) against both; see tests/oci/README.md. Both parts
# run; either failing fails the target. Where an engine, the tarball or a
# runtime is absent it says so and skips; under CI (CI set, not 0/false) a
# skip fails.
RUNTIME_TOOLS_TAR ?= $(abspath $(CURDIR)/..)/shared/oci/runtime-tools-0105384.tar.xz
test-oci: deps all
	@bash tests/oci/run-files.sh $(BUILD); f=$$?; \
	RUNTIME_TOOLS_TAR='$(RUNTIME_TOOLS_TAR)' bash tests/oci/run.sh $(BUILD); v=$$?; \
	[ $$f = 0 ] && [ $$v = 0 ]

# The suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer,
# less harness's task-check, workspace and report tests (npm, pip, git and
# pytest through cordon: their cost is in the tools, six times slower there,
# and their supervisor paths are the other files'; the file's device, --help
# and man page tests still run); CORDON_SKIP= runs them too.
test-sanitize: deps
	@[ -f $(ASAN_BUILD)/build.ninja ] || CC=clang $(MESON) setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug >/dev/null
	@ninja -C $(ASAN_BUILD) --quiet
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 CORDON_SKIP=$${CORDON_SKIP-^harness:test_(a|check|direct|explain|no|overlay|planted|pytest|report|review|ro|workspace)_} bash tests/run.sh $(ASAN_BUILD)

# Clang's static analyzer over everything; any finding fails. Then the
# library's link-level graph over the objects it built (scripts/depgraph.py,
# docs/architecture.md): any cycle between lib/ files fails too.
analyze: deps
	@rm -rf build-analyze
	@scan-build-14 meson setup build-analyze >/dev/null
	@scan-build-14 --status-bugs -o build-analyze/report ninja -C build-analyze >build-analyze/log 2>&1; \
	 rc=$$?; grep -E "warning: [A-Z]|bugs found|No bugs" build-analyze/log | grep -v "unused during"; \
	 python3 scripts/depgraph.py --quiet build-analyze || rc=1; exit $$rc

# The library's link-level graph (who calls whom, by file) of $(BUILD), and
# its cycles (exit 1 on one).
depgraph: all
	@python3 scripts/depgraph.py $(BUILD)

bench: deps all
	@bash bench/bench.sh $(BUILD)

fuzz: deps
	@bash tests/fuzz/run.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz build-analyze

# The integration suite on Debian 12's own kernel (6.1, pure cgroup v2,
# Landlock ABI 2) under qemu; see scripts/vm/run.sh. VM_TESTS=REGEX narrows it
# (taken as written: make would read "$|" in 'a$|b' as its own variable).
test-vm: deps all
	@bash scripts/vm/run.sh $(BUILD) '$(subst ','\'',$(value VM_TESTS))'

# The Debian packages (debian/; docs/install.md) into build/deb/, lintian
# without errors; test-deb installs them into a fresh Debian root
# (scripts/debian-root.sh, cached by its recipe), runs cordon there,
# upgrades and purges.
deb: deps
	@bash scripts/make-deb.sh

test-deb: deb
	@bash scripts/test-deb.sh
