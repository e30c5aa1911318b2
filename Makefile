# fairledger — see README.md. Every target works from a fresh clone; Go
# modules come from the module proxy.
GO      ?= go
PKGS    := ./...
BENCHDIR ?= $(CURDIR)/.bench

.PHONY: test race bench fuzz demo lint build slurm-e2e package deb rpm package-stage package-test

## test: run every test (what CI runs, after make lint, which vets: go vet
## runs once; go test itself runs vet's quick subset)
test:
	$(GO) test -count=1 $(PKGS)

## race: the packages that run goroutines, under the race detector (CI runs it too)
RACEPKGS := ./ingest/... ./billing ./decay ./fairshare ./export/... ./pipeline
race:
	$(GO) test -race -count=1 $(RACEPKGS)

# VERSION: what `fairledger --version` prints and the packages' version,
# from git describe and the v* tags (dist/version.sh explains the forms).
ifeq ($(origin VERSION), undefined)
VERSION := $(shell dist/version.sh)
endif
LDFLAGS := -X main.version=$(VERSION)

## build: the fairledger binary in bin/
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/fairledger ./cmd/fairledger

## bench: benchmarks on centre-sized data (years of 5 M and 20 M jobs, nights of 2 M and 10 M
## jobs; generated once into $(BENCHDIR): about 16 GB of disk)
bench:
	FAIRLEDGER_BENCH_DIR=$(BENCHDIR) $(GO) test -run '^$$' -bench . -benchtime 1x -benchmem $(PKGS)

## fuzz: a short fuzzing run of every parser
fuzz:
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzSacct$$' -fuzztime 30s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzParseAssoc$$' -fuzztime 20s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzParseAssocScript$$' -fuzztime 20s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzParseSlurmConf$$' -fuzztime 20s -fuzzminimizetime 2s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzParseQOS$$' -fuzztime 20s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzTimeStrToMins$$' -fuzztime 10s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzSacctRequest$$' -fuzztime 20s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzSacctJSON$$' -fuzztime 30s -fuzzminimizetime 5s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzParseSubmitLine$$' -fuzztime 10s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzExpandHostlist$$' -fuzztime 10s
	$(GO) test ./ingest -run '^$$' -fuzz '^FuzzSlurmctldLog$$' -fuzztime 20s
	$(GO) test ./billing -run '^$$' -fuzz '^FuzzParseWeights$$' -fuzztime 20s

## demo: the whole pipeline on the embedded demo cluster into the history .demo
demo: build
	./bin/fairledger demo --history .demo

## slurm-e2e: real Slurm clusters of three releases, one release after the other (22.05 from
## Debian 12's packages, 24.11 and 26.05 in debootstrap trees of trixie and sid, cached; needs
## root, skips without it) compared with fairledger cell by cell (docs/slurm-e2e.md); about 6
## minutes a release, and 2 more to build each tree the first time. SLURM_RELEASES picks them.
SLURM_RELEASES ?= 22.05 24.11 26.05
slurm-e2e:
	@for r in $(SLURM_RELEASES); do GO=$(GO) testdata/slurm-e2e/run.sh $$r || exit 1; done

# STATICCHECK is pinned: v0.8.2 (staticcheck 2026.2.2) analyses go1.26
# code; its module comes from the proxy like any other.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

## lint: formatting, go.mod/go.sum tidy, vet, staticcheck, the import direction of the math packages, no citation outside the repository, no broken link in the docs, and the release rules as docs/slurm-versions.md lists them
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) test -count=1 -run 'TestImportDirection|TestNoOutsideCitations|TestDocSectionCitations|TestDocLinks|TestReleaseRules' ./internal/repotest

# NFPM is pinned like STATICCHECK: v2.48.0 builds with go1.26; its module
# comes from the proxy, not from go.mod.
NFPM ?= github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0
PKGOUT := dist/out
PKG_ARCH ?= $(shell $(GO) env GOARCH)
PKG_MAINTAINER ?= fairledger maintainers <maintainers@fairledger.invalid>

## package: the .deb and the .rpm in dist/out/ (nfpm, dist/nfpm.yaml; docs/install.md): the binary
## in /usr/bin, the systemd units, /etc/fairledger/fairledger.toml, the man page and the docs
package: deb rpm

## deb, rpm: one of the two packages
deb rpm: package-stage
	rm -f $(PKGOUT)/*.$@
	FAIRLEDGER_VERSION='$(VERSION)' FAIRLEDGER_ARCH='$(PKG_ARCH)' FAIRLEDGER_MAINTAINER='$(PKG_MAINTAINER)' \
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) \
	$(GO) run $(NFPM) package --config dist/nfpm.yaml --packager $@ --target $(PKGOUT)/

# package-stage: the generated files the packages hold, in dist/out/stage: the binary (cgo,
# -trimpath, without the symbol table and DWARF: -s -w), its man page, and the units of dist/systemd with ExecStart=/usr/bin/fairledger
# (dist/systemd keeps /usr/local/bin, where a binary installed by hand goes).
package-stage:
	rm -rf $(PKGOUT)/stage
	mkdir -p $(PKGOUT)/stage
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(PKGOUT)/stage/fairledger ./cmd/fairledger
	$(PKGOUT)/stage/fairledger man | gzip -9n >$(PKGOUT)/stage/fairledger.1.gz
	for u in dist/systemd/fairledger-nightly.service dist/systemd/fairledger-nightly.timer; do \
		sed 's|^ExecStart=/usr/local/bin/fairledger |ExecStart=/usr/bin/fairledger |' $$u >$(PKGOUT)/stage/$${u##*/} || exit 1; \
	done
	grep -q '^ExecStart=/usr/bin/fairledger nightly$$' $(PKGOUT)/stage/fairledger-nightly.service

## package-test: install, run and remove the .deb in a fresh Debian 12 root (debootstrap, cached in
## /var/cache/fairledger/package-root; needs root, skips without it) and check the .rpm's payload
## (testdata/package/run.sh)
package-test: package
	testdata/package/run.sh $(PKGOUT)
