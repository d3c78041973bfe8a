# zkelect: the two commands a newcomer needs are `make demo` and `make test`.
# Both first install what is missing (a C compiler for -race, Java and
# ZooKeeper, PostgreSQL, Curator, kazoo, docker-compose, Prometheus) from Debian's packages when
# apt-get is available and we are root or have password-less sudo; otherwise
# they stop and name what to install.

GO       ?= go
PKGS     ?= ./...
DEB_PKGS := gcc default-jre-headless zookeeper libcurator-recipes-java python3-kazoo postgresql docker-compose prometheus

.PHONY: test deps vet build demo dev

## test: install what is missing, then vet and run every test with the race detector.
test: deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

## deps: install ZooKeeper, Java, PostgreSQL, Curator, kazoo, docker-compose and Prometheus if missing.
deps:
	@./scripts/install-deps.sh $(DEB_PKGS)

## vet: static checks only.
vet:
	$(GO) vet $(PKGS)

## build: the zkelect binary in bin/.
build:
	$(GO) build -o bin/zkelect ./cmd/zkelect

## demo: failover and fencing on a local ensemble, in under a minute.
demo: deps
	$(GO) run ./cmd/zkelect/zkelect-dev demo

## dev: a local 3-node ZooKeeper ensemble on loopback until Ctrl-C.
dev: deps
	$(GO) run ./cmd/zkelect/zkelect-dev dev

.PHONY: chaos bench

CHAOS_DURATION ?= 10m
CHAOS_SEED     ?=

## chaos: the chaos suite with CHAOS_DURATION of faults (default 10m); CHAOS_SEED=<n> replays a schedule.
chaos: deps
	ZKELECT_CHAOS_DURATION=$(CHAOS_DURATION) ZKELECT_CHAOS_SEED=$(CHAOS_SEED) \
		$(GO) test -race -count=1 -timeout 60m -run TestChaos -v ./chaos/

## bench: `zkelect bench` on a local 3-node ensemble; the report also goes to bench.json.
bench: deps
	$(GO) run ./cmd/zkelect/zkelect-dev bench --out bench.json
