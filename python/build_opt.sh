#!/bin/sh
# Builds the quabla-opt binary and copies it into the package (python/quabla/bin/), so that a
# wheel built afterwards (`maturin build --release`) ships it and the `quabla-opt` console
# command of the package runs it after `pip install`.
set -e
cd "$(dirname "$0")/.."
cargo build --release -p quabla-opt
mkdir -p python/quabla/bin
cp target/release/quabla-opt python/quabla/bin/quabla-opt
echo "python/quabla/bin/quabla-opt updated"
