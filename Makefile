# gpufinops — common tasks. Needs only Go; `make help` lists the targets.
GO       ?= go
PKG      := github.com/gpufinops/gpufinops
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo DEV)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE     ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS  := -s -w -X $(PKG)/pkg/build.Version=$(VERSION) -X $(PKG)/pkg/build.Commit=$(COMMIT) -X $(PKG)/pkg/build.Date=$(DATE)

.PHONY: help build test test-all lint fuzz bench bench-go bench-table docs docs-check golden demo catalog clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/gpufinops with version information
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpufinops ./cmd/gpufinops

# TESTFLAGS is -short by default: the scale, browser, third-party-CLI and
# process-killing tests skip, and `make test` takes under 2 minutes on 2 cores.
# CI (.ci/run) runs everything: make test TESTFLAGS=
TESTFLAGS ?= -short

test: ## vet and run the tests (no cloud, no credentials, no GPU needed); TESTFLAGS= runs the slow ones too
	$(GO) vet ./...
	$(GO) test -count=1 $(TESTFLAGS) ./...

test-all: ## every test, the slow ones included (what CI runs)
	$(MAKE) test TESTFLAGS=

lint: ## gofmt, go vet and the import rules
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -run TestImportRules ./internal/arch/

docs-check: ## fail when a committed schema under docs/schema is stale
	$(MAKE) docs
	git diff --exit-code docs/schema

# Fuzzing is exploration, run before handing a change in; CI never runs it
# (`go test` replays every target's seeds and committed corpus on each run).
# FUZZTIME is the time per target; SINCE=<rev> fuzzes only the targets whose
# package or its imports changed since <rev>; RUN=<regexp> narrows by name;
# KEEP=<n> copies up to n new interesting inputs per target into testdata/fuzz.
# A finding stops the run: fix it and commit the input go wrote under
# testdata/fuzz/ (docs/contributing.md).
FUZZTIME ?= 5s
SINCE    ?=
RUN      ?=
KEEP     ?= 0

fuzz: ## explore with the FuzzXxx targets, FUZZTIME each; SINCE=<rev> only those a change touches (scripts/fuzz.sh)
	@GO=$(GO) FUZZTIME=$(FUZZTIME) SINCE=$(SINCE) RUN='$(RUN)' KEEP=$(KEEP) scripts/fuzz.sh

bench: bench-go bench-table ## run the Go benchmarks, then print the scale table (docs/performance.md)

bench-go: ## run the Go benchmarks (go test -bench)
	$(GO) test -run '^$$' -bench . -benchmem ./...

# BENCH_SIZES (default 1000,10000,100000) are the engine-only rows; BENCH_LIVE
# the sizes also scanned through the simulators (default: those up to 10000),
# at BENCH_LATENCY (default 50ms). BENCH_TARGET (10000) gets the 0 ms, 10 %
# throttled and per-instance baseline rows. docs/performance.md has the rest.
bench-table: ## print the scale table: generated fleets scanned through cloudsim, engine-only runs, the baseline
	$(GO) run ./internal/bench/cmd/benchtable

docs: ## regenerate every JSON schema under docs/schema from the Go types
	$(GO) run ./cmd/gen-schemas

golden: ## rewrite golden files after an intended output change, in every package
	GPUFINOPS_UPDATE_GOLDEN=1 $(GO) test -count=1 ./...

# CATALOG_FLAGS narrows 'make catalog' (e.g. --provider azure). It reads the
# clouds' price APIs with your credentials, as a scan does; internal/e2e runs
# the same command against the simulators. docs/catalog-update.md.
CATALOG_FLAGS ?=

catalog: ## regenerate the embedded price snapshot (pricing/catalog/snapshot/prices.json) from the clouds' price APIs
	$(GO) run ./cmd/gpufinops catalog update --replace --file pricing/catalog/snapshot/prices.json $(CATALOG_FLAGS)

demo: ## analyze the embedded demo fleet
	$(GO) run ./cmd/gpufinops analyze --demo

clean: ## remove build output
	rm -rf bin dist
