#!/bin/sh
# Work–precision benchmark of daec against Hairer's RADAU5 on the DAE test set
# (benches/testset/README.md).
#
#   benches/testset/radau5.sh [--write-docs | --out DIR] [--tols 4,5,...,10] [PROBLEM ...]
#
# Fetches the Assimulo 3.0 source distribution from the Python package index
# into target/radau5/ (not committed; checked against its SHA-256), extracts
# Hairer's radau_decsol.f, compiles it with gfortran -O2 into a shared library
# and runs the harness (benches/testset/main.rs) in release mode with the
# library's path in DAEC_RADAU5_LIB. The arguments go to the harness:
# --write-docs writes docs/benchmarks/testset/, else target/testset-bench/.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cache="$root/target/radau5"
version=3.0
sdist="Assimulo-$version.tar.gz"
sha256=61cdca4562745078c966cc4fab44d8bc0db11a9e6856b45c470ac65c16af9e8a
hairer="Assimulo-$version/assimulo/thirdparty/hairer"
index="${PIP_INDEX_URL:-https://pypi.org/simple}"
lib="$cache/libradau5.so"

if ! command -v gfortran >/dev/null 2>&1; then
    echo "error: gfortran is not installed; RADAU5 is Fortran. Install it (Debian/Ubuntu: apt-get install gfortran; Fedora: dnf install gcc-gfortran; macOS: brew install gcc) and run this again." >&2
    exit 2
fi
mkdir -p "$cache"

if [ ! -f "$cache/$hairer/radau_decsol.f" ]; then
    if [ ! -f "$cache/$sdist" ]; then
        # The file as pip would fetch it, from the index's page of the
        # package (`pip download` would also build the package's metadata,
        # which needs numpy; only the Fortran file is used here).
        echo "fetching $sdist from $index" >&2
        url=$(curl -fsSL "$index/assimulo/" |
            grep -o "href=\"[^\"]*/$sdist[^\"]*\"" | head -n 1 |
            sed -e 's/^href="//' -e 's/"$//' -e 's/#.*//')
        if [ -z "$url" ]; then
            echo "error: $sdist is not on $index/assimulo/" >&2
            exit 2
        fi
        case "$url" in
            http*) ;;
            *) url="$index/assimulo/$url" ;;
        esac
        curl -fsSL -o "$cache/$sdist.part" "$url"
        if ! echo "$sha256  $cache/$sdist.part" | sha256sum -c - >/dev/null 2>&1; then
            echo "error: $url does not have the SHA-256 $sha256" >&2
            rm -f "$cache/$sdist.part"
            exit 2
        fi
        mv "$cache/$sdist.part" "$cache/$sdist"
    fi
    tar -xzf "$cache/$sdist" -C "$cache" "$hairer/radau_decsol.f" "$hairer/LICENSE_HAIRER"
fi

if [ ! -f "$lib" ] || [ "$cache/$hairer/radau_decsol.f" -nt "$lib" ]; then
    echo "compiling radau_decsol.f (gfortran -O2)" >&2
    gfortran -O2 -std=legacy -shared -fPIC -o "$lib.part" "$cache/$hairer/radau_decsol.f"
    mv "$lib.part" "$lib"
fi

cd "$root"
DAEC_RADAU5_LIB="$lib" exec cargo bench --bench testset -- "$@"
