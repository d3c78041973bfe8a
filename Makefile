# zkelect: the two commands a newcomer needs are `make demo` and `make test`.
# Both install what is missing (Java 17 and ZooKeeper, PostgreSQL, Curator)
# from Debian's packages when apt-get is available and we are root or have sudo.

GO       ?= go
PKGS     ?= ./...
DEB_PKGS := default-jre-headless zookeeper libcurator-recipes-java postgresql docker-compose

.PHONY: test deps vet demo dev bench chaos build

## deps: install ZooKeeper, Java, PostgreSQL and Curator if missing.
deps:
	@./scripts/install-deps.sh $(DEB_PKGS)

## test: install what is missing, then vet and run every test with the race detector.
test: deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

build:
	$(GO) build -o bin/zkelect ./cmd/zkelect

## dev: a local 3-node ZooKeeper ensemble on loopback until Ctrl-C.
dev: deps
	$(GO) run ./cmd/zkelect dev
