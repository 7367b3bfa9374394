#!/bin/bash
# Time and peak memory of every stage of daec on the scalable model
# families of models/scale/, for N over three decades, with the growth
# exponent between consecutive sizes (log(t2/t1) / log(N2/N1); 1 is linear).
#
#   benches/scaling.sh [SIZES] [SIM_MAX] [T_END] [FORM_MAX]
#
# SIZES: the values of N (default "100 400 1600 6400 25600 102400", three
# decades in steps of 4); SIM_MAX: the largest N that is simulated
# (default 1600); T_END: the end time of the
# short run of `simulate` (default 1e-3: the preparation and a few steps);
# FORM_MAX: the largest N of the stages of the DD and StE forms (default
# 6400).
# Stages: flatten, analyze, regularize --form hic, simulate (preparation +
# short run), regularize and simulate with --form dd and --form ste, each
# a separate run of the release binary under /usr/bin/time (wall time,
# peak resident memory). The environment variable STAGES restricts the
# stages (e.g. STAGES="regularize-dd simulate-dd"). Prints one Markdown
# table per family.
set -eu
sizes=${1:-"100 400 1600 6400 25600 102400"}
sim_max=${2:-1600}
t_end=${3:-1e-3}
form_max=${4:-6400}
stages=${STAGES:-"flatten analyze regularize simulate regularize-dd regularize-ste simulate-dd simulate-ste"}
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
(cd "$root" && cargo build --release --quiet -p daec-cli)
daec="$target/release/daec"
work=$(mktemp -d "${TMPDIR:-/tmp}/daec-scaling.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: prints "seconds kilobytes" of one run (or "- -" on failure)
run() {
    if /usr/bin/time -f "%e %M" -o "$work/time" "$daec" "$@" -o "$work/out" \
        >"$work/stdout" 2>"$work/stderr"; then
        cat "$work/time"
    else
        echo "- -"
    fi
}

for family in pendulum_chain spring_chain transmission_line; do
    model="$root/models/scale/$family.dae"
    echo
    echo "### $family"
    echo
    echo "| stage | N | time (s) | exponent | peak memory (MB) |"
    echo "|---|---:|---:|---:|---:|"
    for stage in $stages; do
        prev_n=""
        prev_t=""
        for n in $sizes; do
            case $stage in
                flatten) r=$(run flatten "$model" -p "N=$n") ;;
                analyze) r=$(run analyze "$model" -p "N=$n") ;;
                regularize) r=$(run regularize "$model" -p "N=$n" --form hic) ;;
                simulate)
                    if [ "$n" -gt "$sim_max" ]; then continue; fi
                    r=$(run simulate "$model" -p "N=$n" --t-end "$t_end")
                    ;;
                regularize-dd | regularize-ste)
                    if [ "$n" -gt "$form_max" ]; then continue; fi
                    r=$(run regularize "$model" -p "N=$n" --form "${stage#regularize-}")
                    ;;
                simulate-dd | simulate-ste)
                    if [ "$n" -gt "$sim_max" ] || [ "$n" -gt "$form_max" ]; then continue; fi
                    r=$(run simulate "$model" -p "N=$n" --t-end "$t_end" --form "${stage#simulate-}")
                    ;;
            esac
            t=${r% *}
            kb=${r#* }
            exponent=$(awk -v t="$t" -v pt="$prev_t" -v n="$n" -v pn="$prev_n" 'BEGIN {
                if (pt == "" || t == "-" || pt == "-" || pt + 0 <= 0.05) { print "" }
                else { printf "%.2f", log(t / pt) / log(n / pn) } }')
            mb=$(awk -v kb="$kb" 'BEGIN { if (kb == "-") print "-"; else printf "%.0f", kb / 1024 }')
            echo "| $stage | $n | $t | $exponent | $mb |"
            prev_n=$n
            prev_t=$t
        done
    done
done
