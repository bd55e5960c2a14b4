#!/usr/bin/env bash
# A profile-guided build of innosim for long campaigns: builds an
# instrumented binary, runs a short campaign of every embedded profile with
# it, and builds again with what that run counted (rustc's -Cprofile-use),
# so the compiler lays out and inlines for the paths the fuzzer takes.
# The result runs the same seeds to the same traces as the plain release
# build (a compiler option, not a change of code), with fewer instructions;
# sim/src/campaign.rs has the figures and the command that measured them.
#
#   bash tests/tools/pgo-build.sh     # then target/pgo/use/release/innosim
#
# Needs rustup's llvm-tools component (llvm-profdata), which it installs
# when missing. The counts belong to the source they were taken on and to
# the compiler's LLVM, so the script takes them afresh each time and keeps
# nothing in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$root/target/pgo

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools >/dev/null
fi

rm -rf "$work/raw" "$work/innosim.profdata"
mkdir -p "$work/raw"
RUSTFLAGS="-Cprofile-generate=$work/raw" CARGO_TARGET_DIR=$work/gen cargo build --release

# The training campaign: every profile, a few seconds each, from a scratch
# directory. A violation stops the script: its summary line says which seed,
# and `innosim replay` reproduces it with a plain build.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for run in default:0..150 compressed:0..20 small:0..300 long-columns:0..40 \
    crash-heavy:0..60 io-errors:0..60 hot-rows:0..4 oltp:0..4 transfer:0..10 \
    default+timed:0..40; do
    (cd "$scratch" && "$work/gen/release/innosim" fuzz --profile "${run%%:*}" \
        --seeds "${run#*:}" --jobs 1 | grep -v '^reached: ')
done

"$profdata" merge -o "$work/innosim.profdata" "$work/raw"
RUSTFLAGS="-Cprofile-use=$work/innosim.profdata" CARGO_TARGET_DIR=$work/use cargo build --release
echo "built $work/use/release/innosim"
