#!/usr/bin/env bash
# Installs whichever of the Debian packages named on the command line are
# missing (each is checked by what it provides, so a ZooKeeper release in
# $ZOOKEEPER_HOME or a Java from elsewhere counts). Needs apt-get and root or
# password-less sudo; otherwise it names what to install and exits non-zero.
set -euo pipefail

# provided PACKAGE: succeeds when what PACKAGE provides is already here.
provided() {
	case "$1" in
	default-jre-headless | default-jre | openjdk-*)
		command -v java >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] ;;
	zookeeper)
		[ -e /usr/share/java/zookeeper.jar ] ||
			compgen -G "${ZOOKEEPER_HOME:-/nonexistent}/lib/*.jar" >/dev/null ;;
	libcurator-recipes-java)
		[ -e /usr/share/java/curator-recipes.jar ] ;;
	python3-kazoo)
		# zkelect bench runs kazoo with Debian's python3.
		/usr/bin/python3 -c 'import kazoo' 2>/dev/null ;;
	postgresql)
		compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null ;;
	gcc | build-essential)
		# go test -race needs cgo, hence a C compiler.
		command -v "${CC:-gcc}" >/dev/null || command -v cc >/dev/null ;;
	docker-compose)
		command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 ;;
	prometheus)
		# The dashboard and alert tests run a real Prometheus and its promtool.
		for bin in prometheus promtool; do
			command -v "$bin" >/dev/null || [ -x "${PROMETHEUS_HOME:-/nonexistent}/$bin" ] || return 1
		done ;;
	*)
		dpkg -s "$1" >/dev/null 2>&1 ;;
	esac
}

missing=()
for pkg in "$@"; do
	provided "$pkg" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi

hint="install a C compiler (for go test -race), Java 11+ and Apache ZooKeeper (or set ZOOKEEPER_HOME to an unpacked release),
  Apache Curator, kazoo (python3), PostgreSQL, docker-compose and Prometheus (or set PROMETHEUS_HOME to an unpacked release);
  on Debian/Ubuntu: apt-get install ${missing[*]}"
if ! command -v apt-get >/dev/null; then
	echo "install-deps: missing: ${missing[*]}; no apt-get here: $hint" >&2
	exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO=(sudo -n)
	else
		echo "install-deps: missing: ${missing[*]}; run as root (or with password-less sudo), or $hint" >&2
		exit 1
	fi
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

still=()
for pkg in "${missing[@]}"; do
	provided "$pkg" || still+=("$pkg")
done
if [ "${#still[@]}" -ne 0 ]; then
	echo "install-deps: installed, but still missing what these provide: ${still[*]}" >&2
	exit 1
fi
