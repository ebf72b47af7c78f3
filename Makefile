# corral — see README.md. `make run` and `make test` are the two entry points.
SHELL := /bin/bash
GO ?= go
BIN := bin/corral
# The benchmark is a binary of its own (it links plotting; the server does
# not); `corral bench` runs the corral-bench found beside it.
BENCHBIN := bin/corral-bench
# The end-to-end suites drive a race-detector build, so data races in the
# server show up under real client load.
RACEBIN := bin/corral-race
# -trimpath keys the build cache on module paths, not on the checkout's
# directory: CI tests a clean clone in a new directory each time, and
# without it every package of the module is compiled again in each mode
# (vet, build, race, fuzz-instrumented). Nothing reads source paths at run
# time (tests find the module root from their working directory).
export GOFLAGS += -trimpath
VENV := .venv
PY := $(VENV)/bin/python
# FUZZTIME is how many inputs each fuzz target tries in `make fuzz`, and
# so in `make test` (CI). The default is a short form, a few seconds a
# target: it catches a decoder that newly fails on inputs near its seeds
# and its stored corpus, which is what a CI run can afford for twenty-odd
# targets on 2 cores (each target builds its own coverage-instrumented
# test binary, and a package that links pebble runs only a few thousand
# inputs a second, its whole coverage map reset per input). Fuzz for real
# with `make fuzz FUZZTIME=1000000x` or `FUZZTIME=10m`; the targets' seed
# corpora run as ordinary tests in `unit` whatever FUZZTIME is. Prefer a
# count to a duration in CI: with a duration Go's fuzz coordinator can
# report "context deadline exceeded" and fail a target that found nothing
# when the deadline lands while a worker is busy (golang/go#56238 and its
# relatives; CI saw it on 2 cores while FuzzReadSnapshot minimized a new
# input). A count has no deadline to race. FUZZMINTIME bounds minimizing
# each new or failing input.
FUZZTIME ?= 20000x
FUZZMINTIME ?= 10s
FUZZ_TARGETS := \
	./wire:FuzzDecodeRequest ./wire:FuzzDecodeConnect ./wire:FuzzDecodeMulti ./wire:FuzzReadFrame \
	./txn:FuzzDecode ./datatree:FuzzReadSnapshot ./datatree:FuzzSnapshotLinking \
	./config:FuzzParse ./config:FuzzReadProperties ./transport:FuzzDecodeMessage \
	./server:FuzzDecodeCheckpoint ./zkfmt:FuzzDecodeSnapshot ./zkfmt:FuzzLogReader \
	./zkfmt:FuzzDecodeTxn ./datatree:FuzzStatsTrack ./kv/ring:FuzzDecode ./kv/cm:FuzzDecodeRecords \
	./rlog/datalog:FuzzDecodeRecord ./rlog:FuzzDecodeMutation ./rlog:FuzzParseControl \
	./server:FuzzInstallImage ./server:FuzzDecodeDriverMsg ./kv:FuzzDecodeMutation

.PHONY: all build build-race run test unit e2e e2e-go e2e-client python fuzz lint deps zookeeper etcd bench clean proto

all: build

build:
	$(GO) build -o $(BIN) ./cmd/corral
	$(GO) build -o $(BENCHBIN) ./cmd/corral-bench

build-race:
	$(GO) build -race -o $(RACEBIN) ./cmd/corral

# A local ensemble on loopback; prints the connect string. Ctrl-C stops it.
run: build
	./$(BIN) ensemble

# Everything CI runs: installs what the tests need, then runs them all.
# (e2e includes the Python suite.)
test: deps lint build unit e2e fuzz

# The ZooKeeper jars are fetched too: config's test checks that ZooKeeper's
# own parser reads every test zoo.cfg as corral does, and the Java client
# and Curator (scripts/curator) drive the server in tests/java; Jetty lets
# tests/ops compare ZooKeeper's AdminServer with corral's. Debian's
# chromium (scripts/chromium.sh) runs the console's browser tests.
deps:
	$(GO) mod download
	./scripts/python-venv.sh >/dev/null
	./scripts/zookeeper/fetch.sh >/dev/null
	./scripts/curator/fetch.sh >/dev/null
	./tests/zookeeper-admin-classpath.sh >/dev/null
	./scripts/chromium.sh

# The house rules (internal/lint): gofmt, go vet, the import rules, no
# absolute machine paths in the tree.
lint:
	$(GO) test -count=1 ./internal/lint

# The unit suites under the race detector, except sim: the simulator runs
# every member in one goroutine (it steps the replica driver itself), so
# the detector can find nothing there and only makes its seeds run about
# ten times slower; it runs once, without it. Suites that start a server
# process (cli, client, client/recipes, cmd/corral, kv/cm) use bin/corral
# instead of each building and linking one of their own.
unit: build
	CORRAL_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /tests/ -e /internal/lint -e '/sim$$')
	$(GO) test -count=1 ./sim

# The real-process suites (Go, the client's on an ensemble, Python) run
# side by side: they spend most of their time waiting on servers
# (elections, session timeouts, restarts), not on the CPU -- tests/...
# alone keeps about two thirds of one core busy -- so together they take
# little longer than the longest of them. --output-sync prints each
# suite's output in one piece when it ends.
e2e: build-race
	@$(MAKE) --no-print-directory -j3 --output-sync=target e2e-go e2e-client python

e2e-go: build-race
	GORACE=halt_on_error=1 CORRAL_BIN=$(CURDIR)/$(RACEBIN) $(GO) test -count=1 -timeout 20m ./tests/...

# The client's own suite once more, against a 3-server ensemble.
e2e-client: build-race
	GORACE=halt_on_error=1 CORRAL_BIN=$(CURDIR)/$(RACEBIN) CORRAL_E2E_ENSEMBLE=3 $(GO) test -count=1 -timeout 10m ./client/

python: build-race
	GORACE=halt_on_error=1 CORRAL_BIN=$(CURDIR)/$(RACEBIN) $(PY) -m pytest -q tests/python

# CORRAL_BIN: kv/cm's TestMain would otherwise build and link the server
# in the coordinator and again in each fuzz worker (workers are the test
# binary too), three builds for one target.
fuzz: build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
	  CORRAL_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINTIME) $$pkg; \
	done

# Regenerates the Go code of every api/**/*.proto with pinned tools
# (scripts/protogen.sh); the generated code is committed.
proto:
	./scripts/protogen.sh

# Apache ZooKeeper 3.9.3's jars, for running the suites against the
# reference (CORRAL_E2E_TARGET=zookeeper) and for benchmarks.
zookeeper:
	./scripts/zookeeper/fetch.sh

# etcd for `corral bench kv` (Debian's etcd-server, etcd 3.4); never
# installed at test time.
etcd:
	@command -v etcd >/dev/null || sudo -n apt-get install -y etcd-server || apt-get install -y etcd-server
	@etcd --version | head -1

bench: build zookeeper
	./$(BIN) bench compare

clean:
	rm -rf bin
