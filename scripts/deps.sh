#!/bin/bash
# ktrace: install the Debian packages the build, the kernel and the tests
# need.  Silent and fast (one dpkg-query) when everything is there.
set -euo pipefail

pkgs=(
	# tools and kernel build
	gcc make libc6-dev binutils ccache flex bison bc libelf-dev libssl-dev
	cpio xz-utils kmod rsync perl python3 patch git pkg-config file
	# zstd: compressed trace files (ktrace -z; libzstd.a for the static tools),
	# --send/--listen frames, --format=parquet's pages; the zstd CLI the tests
	# decode with
	libzstd-dev zstd
	# --send/--listen --key: the handshake's HMAC and the frames' AEAD
	# (libsodium.a for the static tools)
	libsodium-dev
	linux-source-6.1 linux-source-6.12 sparse
	# the test VM
	qemu-system-x86 busybox-static
	# a 32-bit program whose probe hits the kernel refuses (vm 86)
	gcc-multilib
	# symbols, graphs and the tracers we compare with or read our output
	libdw-dev elfutils graphviz babeltrace2 uftrace lttng-tools protobuf-compiler
	liblttng-ust-dev trace-cmd
	# libFuzzer
	clang libclang-rt-dev
	# Debian source packages for the call views' ground truth (dpkg-source)
	dpkg-dev
	# the system calls dtrace makes on files a trace names (host 72, 74)
	strace
	# the probes' ground truth and debug info server (host 97, 98)
	gdb g++ debuginfod
	# node runs DuckDB from npm (host 103)
	nodejs
)

declare -A installed=()
while read -r status name; do
	[ "$status" = ii ] && installed[$name]=1
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${pkgs[@]}" 2>/dev/null || true)
missing=()
for p in "${pkgs[@]}"; do
	[ -n "${installed[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "ktrace: installing missing packages: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null ||
		{ echo "ktrace: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
