#!/usr/bin/env bash
# Measures `cargo check` of the two crates generate.py writes: the components through the
# macros against the same components with hand-written trait impls. Dependencies (agboss-core
# and the rest) are checked once first; then each crate is checked RUNS times after touching
# its source, and the best times and their ratio are printed.
#
#   python3 scripts/compile-time/generate.py /tmp/ct
#   scripts/compile-time/measure.sh /tmp/ct [RUNS]
#
# Uses $CARGO_TARGET_DIR when set (shared by both crates), else OUT_DIR/target.
set -euo pipefail
out=${1:?usage: measure.sh OUT_DIR [RUNS]}
runs=${2:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$out/target}
best() {
  local dir=$1 best_ms=
  (cd "$dir" && cargo check -q 2>/dev/null) || (cd "$dir" && cargo check)
  for _ in $(seq "$runs"); do
    touch "$dir/src/lib.rs"
    local start end ms
    start=$(date +%s%N)
    (cd "$dir" && cargo check -q)
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    if [[ -z $best_ms || $ms -lt $best_ms ]]; then best_ms=$ms; fi
  done
  echo "$best_ms"
}
macros=$(best "$out/macros")
hand=$(best "$out/hand")
echo "cargo check, best of $runs: macros ${macros} ms, hand-written ${hand} ms"
python3 -c "print(f'ratio macros / hand-written: {$macros / $hand:.2f}')"
