# compliance: build, run and test the appliance.
BINARY  := compliance
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
# Fuzz time per target in `make test` (CI budget); raise for a longer local run.
FUZZTIME ?= 5s

.PHONY: build run test test-short bench fuzz load crashtest lint tidy release clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) .

run: build
	./$(BINARY) serve

# vet runs with CGO_ENABLED=0 so its compile of the dependencies is the one
# the end-to-end tests reuse when they build the static binary.
test:
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz

# Runs every Go fuzz target of the module for FUZZTIME each (.ci/fuzz).
# No input may panic or answer 5xx; a failing input is saved under the
# package's testdata/fuzz and fails the run.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash .ci/fuzz

test-short:
	$(GO) test -count=1 -short ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=2s ./...

# Load measurement: seeds 100 organizations with 100,000 vendors, drives a
# mixed workload on loopback and compares with a bare net/http server.
# LOAD_FLAGS passes options, e.g. LOAD_FLAGS='--duration 30s --concurrency 64'.
LOAD_FLAGS ?=
load:
	$(GO) run ./cmd/loadtest $(LOAD_FLAGS)

# Crash test: SIGKILLs the built binary under write load (100 times by
# default), restarts it and checks every acknowledged write and its event.
CRASH_FLAGS ?=
crashtest: build
	$(GO) run ./cmd/crashtest --binary ./$(BINARY) $(CRASH_FLAGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet ./...
	$(MAKE) --no-print-directory openapi-check

# Lints the OpenAPI document the binary serves (Redocly recommended rules,
# Spectral spectral:oas; any error or warning fails), then generates a Go
# client and TypeScript types from it and checks that they build and work
# (.ci/openapi/check.sh, docs/openapi.md). Needs Node 20 and
# `npm ci` in .ci/openapi once.
.PHONY: openapi-check
openapi-check:
	GO=$(GO) bash .ci/openapi/check.sh

# -e: modernc.org/sqlite's own tests import a pprof version the module proxy
# no longer serves; nothing here needs it, so tidy goes on past it.
tidy:
	$(GO) mod tidy -e

release:
	mkdir -p dist
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-linux-amd64 .
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-linux-arm64 .

clean:
	rm -rf $(BINARY) dist
