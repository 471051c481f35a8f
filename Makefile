# compliance: build, run and test the appliance.
BINARY  := compliance
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
# Fuzz time per target in `make test` (CI budget); raise for a longer local run.
FUZZTIME ?= 5s

.PHONY: build run test test-postgres test-short bench fuzz load crashtest lint tidy release package clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) .

run: build
	./$(BINARY) serve

# vet runs with CGO_ENABLED=0 so its compile of the dependencies is the one
# the end-to-end tests reuse when they build the static binary.
# The tests start a throwaway PostgreSQL cluster beside them
# (.ci/with-postgres): the whole suite runs on SQLite under the race
# detector and, beside it at low priority, the store's, the domain's and
# the API's tests run again on PostgreSQL (.ci/test-stores).
test:
	CGO_ENABLED=0 $(GO) vet ./...
	GO=$(GO) PG_PACKAGES='$(PG_PACKAGES)' .ci/with-postgres .ci/test-stores
	$(MAKE) --no-print-directory fuzz

# Runs every Go fuzz target of the module for FUZZTIME each (.ci/fuzz).
# No input may panic or answer 5xx; a failing input is saved under the
# package's testdata/fuzz and fails the run.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash .ci/fuzz

# The store's, the domain's and the API's tests against PostgreSQL
# instead of SQLite (./web/ alone takes over 30 minutes on a busy 2-core
# machine).
PG_PACKAGES ?= ./storage/... ./app/... ./web/...
test-postgres:
	COMPLIANCE_TEST_STORE=postgres .ci/with-postgres $(GO) test -count=1 -timeout 45m $(PG_PACKAGES)

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

# release: static binaries for linux/amd64 and arm64, a CycloneDX SBOM of
# the modules compiled into the binary, and SHA-256 checksums of all of it.
NFPM      ?= github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.41.1
CYCLONEDX ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
# Package version: the exact tag without its v, else 0.0.0~git<commit>.
PKG_VERSION ?= $(shell v=$$(git describe --tags --exact-match 2>/dev/null) && echo $${v#v} || echo 0.0.0~git$$(git rev-parse --short HEAD 2>/dev/null || echo unknown))

release:
	mkdir -p dist
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-linux-amd64 .
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-linux-arm64 .
	# The same binary is the device agent (`compliance agent`) on laptops.
	CGO_ENABLED=0 GOOS=darwin GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-darwin-amd64 .
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-darwin-arm64 .
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$(BINARY)-windows-amd64.exe .
	GOOS=linux GOARCH=amd64 $(GO) run $(CYCLONEDX) app -json -licenses -output dist/$(BINARY).cdx.json -main . .
	cd dist && sha256sum $(BINARY)-linux-amd64 $(BINARY)-linux-arm64 $(BINARY)-darwin-amd64 $(BINARY)-darwin-arm64 $(BINARY)-windows-amd64.exe $(BINARY).cdx.json > SHA256SUMS

# package: .deb and .rpm packages for both architectures (nfpm), with the
# hardened systemd unit (docs/deploy/compliance.service), into dist/.
package: release
	for arch in amd64 arm64; do \
	  for fmt in deb rpm; do \
	    mkdir -p dist/pkg && cp dist/$(BINARY)-linux-$$arch dist/pkg/compliance && \
	    ARCH=$$arch VERSION=$(PKG_VERSION) \
	      $(GO) run $(NFPM) package --config .ci/package/nfpm.yaml --packager $$fmt --target dist/ || exit 1; \
	  done; \
	done
	rm -rf dist/pkg
	cd dist && sha256sum $(BINARY)-linux-amd64 $(BINARY)-linux-arm64 $(BINARY).cdx.json *.deb *.rpm > SHA256SUMS

clean:
	rm -rf $(BINARY) dist
