#!/usr/bin/env bash
# Installs the Debian packages named on the command line when any of the
# tools they provide is missing. Needs apt-get and root (or sudo); otherwise
# it names what to install and exits non-zero.
set -euo pipefail

have_all() {
	command -v java >/dev/null &&
		[ -e /usr/share/java/zookeeper.jar ] &&
		[ -e /usr/share/java/curator-recipes.jar ] &&
		ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 &&
		command -v docker-compose >/dev/null
}

if have_all; then
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "install-deps: missing tools; install Java 17, Apache ZooKeeper (set ZOOKEEPER_HOME)," >&2
	echo "  Apache Curator, PostgreSQL and docker-compose, or use a Debian/Ubuntu machine: $*" >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then
		SUDO="sudo"
	else
		echo "install-deps: run as root or install: apt-get install $*" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
have_all || { echo "install-deps: packages installed but tools still missing: $*" >&2; exit 1; }
