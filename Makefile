# fairledger — see README.md. Every target works from a fresh clone; Go
# modules come from the module proxy.
GO      ?= go
PKGS    := ./...
BENCHDIR ?= $(CURDIR)/.bench

.PHONY: test race bench fuzz demo lint build slurm-e2e

## test: run every test (what CI runs, after make lint, which vets: go vet
## runs once; go test itself runs vet's quick subset)
test:
	$(GO) test -count=1 $(PKGS)

## race: the packages that run goroutines, under the race detector (CI runs it too)
RACEPKGS := ./ingest/... ./billing ./decay ./fairshare ./export/... ./pipeline
race:
	$(GO) test -race -count=1 $(RACEPKGS)

## build: the fairledger binary in bin/
build:
	$(GO) build -o bin/fairledger ./cmd/fairledger

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
