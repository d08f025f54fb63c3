#!/bin/bash
# The bundled model's training, from scratch, as one script: seven stages, each starting from
# the previous stage's weights (README.md "Reproduce" says why each stage exists). Data:
# `synth.py --train 8000` first; stage G also needs tern-dev built (build/bin/tern-dev). Budgets are
# optimizer steps, so the result does not depend on how busy the machine is; A-E keep the
# step counts and schedule lengths (--horizon) of the hand-run stages behind an earlier
# bundle, stopped part-way through their schedules. ~113 minutes on the idle 2-core Zen 4
# host (119 at the slowest rates it has shown; README.md). usage: bash recipe.sh [OUT_DIR [SPLIT]]
# SPLIT (default train, the bundled model's) is the data of every stage: mix_train
# (synth_mix.py) trains on natural phrasings, monologues, dialogues with JSON answers,
# context lines and noise. A stage whose OUT_DIR/<stage>/ckpt.pt exists is skipped; so is
# every stage up to the latest committed checkpoints/<split>-<stage>.pt (fp16, keep.py),
# which stands in for its stage, so a recipe cut short by the machine's time resumes after
# it. THREADS (default 2): torch threads of stages A-F. KEEP=1: keep each finished stage
# there (keep.py), in place of the split's earlier one. FROM=MODEL_DIR: fine-tune instead of
# training from scratch: stage D is the model folder's weights (init_from_gguf.py), then E-G
# from them, the aid heads the files lack trained alone for E's first 150 steps, and long
# stages F2 and F3 between F and G (each kept every 250 steps in checkpoints/<split>-ft-<stage>-part.pt,
# where a cut run resumes); the kept checkpoints are named <split>-ft-<stage>.pt.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-work/recipe}
split=${2:-train}
mkdir -p "$out"
export OMP_WAIT_POLICY=PASSIVE
# glibc's malloc maps torch's large tensors afresh at every step and the kernel faults them in
# 4 KiB at a time: a third of a step's time went to page faults. Transparent huge pages for
# malloc's memory took 40 steps of stage C from 54 to 37-39 s (the same losses).
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}
py=/usr/bin/python3
trainer=(train.py --threads "${THREADS:-2}" --batch-seconds 10 --mel-weight 1.0 --split "$split")
enc=(--guide-weight 0 --tok-drop 0.1)          # stages A-C: the encoder learns to hear
dec=(--ctc-weight 0.3 --char-weight 1.0 --guide-weight 0.5 --tok-drop 0.3)  # D-F: and is heard
tag=$split${FROM:+-ft}  # names the kept checkpoints
fresh=()
kept=""  # the latest stage kept in the repository for this split (keep.py)
for s in A B C D E F F2 F3 G; do [ -f "checkpoints/$tag-$s.pt" ] && kept=$s; done
stage() {  # name, script, then its arguments
    local name=$1 script=$2; shift 2
    if [ -n "$kept" ] && [[ ! "$name" > "$kept" ]]; then  # each stage reads only the last one
        if [ "$name" = "$kept" ] && [ ! -f "$out/$name/ckpt.pt" ]; then
            mkdir -p "$out/$name"
            cp "checkpoints/$tag-$name.pt" "$out/$name/ckpt.pt"
        fi
        echo "stage $name: kept in checkpoints/ (or before it)"
        return
    fi
    [ -f "$out/$name/ckpt.pt" ] && { echo "stage $name: done already"; return; }
    mkdir -p "$out/$name"
    echo "stage $name: $(date +%T)"
    "$py" "$script" "$@" --out "$out/$name/part.pt" > "$out/$name/train.log" 2>&1
    mv "$out/$name/part.pt" "$out/$name/ckpt.pt"
    # a later stage's kept part started from this stage's older weights
    for s in F2 F3 G; do
        if [[ "$s" > "$name" ]]; then rm -f "checkpoints/$tag-$s-part.pt"; fi
    done
    if [ -n "${KEEP:-}" ] && [ "$name" != G ]; then  # the stage replaces the split's older one
        "$py" keep.py "$out/$name/ckpt.pt" "checkpoints/$tag-$name.pt"
        for s in A B C D E F F2 F3; do
            if [[ "$s" < "$name" ]]; then rm -f "checkpoints/$tag-$s.pt"; fi
        done
        rm -f "checkpoints/$tag-$name-part.pt"
    fi
}
if [ -n "${FROM:-}" ]; then
    # the folder's weights: an encoder that already hears, a decoder that already reads it
    # (not needed once a later stage is kept)
    if [ -z "$kept" ] && [ ! -f "$out/D/ckpt.pt" ]; then
        mkdir -p "$out/D"
        "$py" init_from_gguf.py --model "$FROM" --out "$out/D/part.pt"
        mv "$out/D/part.pt" "$out/D/ckpt.pt"
    fi
    kept=${kept:-D}
    fresh=(--fresh-first 150)
fi
stage A "${trainer[@]}" --steps 2400 --horizon 8450 --lr 2e-3 --ctc-weight 0.5 \
    --char-weight 0.5 "${enc[@]}"
# B: a fresh stage 6, heads and token-CTC head on A's trunk
stage B "${trainer[@]}" --steps 520 --horizon 6050 --lr 1.5e-3 --ctc-weight 0.5 \
    --char-weight 0.5 "${enc[@]}" --init "$out/A/ckpt.pt" \
    --reinit encoder.trunk.down.6,encoder.trunk.stages.6,encoder.acoustic,encoder.semantic,ctc
stage C "${trainer[@]}" --steps 2180 --horizon 6810 --lr 1.5e-3 --ctc-weight 0.3 \
    --char-weight 1.0 "${enc[@]}" --init "$out/B/ckpt.pt"
stage D "${trainer[@]}" --steps 2790 --horizon 4568 --qat-from 0.5 --lr 1.5e-3 "${dec[@]}" \
    --init "$out/C/ckpt.pt"
stage E "${trainer[@]}" --steps 2200 --horizon 3070 --qat-from 0 --lr 1e-3 "${dec[@]}" \
    --init "$out/D/ckpt.pt" "${fresh[@]}"
# F: a fresh schedule, the rate held for its first 30% (E's had decayed while the model still
#    improved fast)
stage F "${trainer[@]}" --steps 1200 --decay-from 0.3 --qat-from 0 --lr 8e-4 --seed 3 \
    "${dec[@]}" --init "$out/E/ckpt.pt"
last=F
if [ -n "${FROM:-}" ]; then
    # F2 (fine-tune only): the encoder hears the new words only after several passes over
    #    the 21 h of mix_train (E and F see under half of it); ~2 hours, so it keeps its
    #    weights in checkpoints/ every 250 steps and a run cut short resumes there
    part=checkpoints/$tag-F2-part.pt
    resume=()
    [ -f "$part" ] && resume=(--resume "$part")
    stage F2 "${trainer[@]}" --steps 12000 --decay-from 0.5 --qat-from 0 --lr 8e-4 --seed 4 \
        "${dec[@]}" --init "$out/F/ckpt.pt" --save-small "$part" "${resume[@]}"
    # F3: the hearing still improved at F2's end (README.md, "hearing.py"), so a further
    #    schedule at a lower rate (F2's restart at 8e-4 first lost ground for ~1 500 steps);
    #    about an hour at 2 threads, kept and resumed like F2
    part=checkpoints/$tag-F3-part.pt
    resume=()
    [ -f "$part" ] && resume=(--resume "$part")
    stage F3 "${trainer[@]}" --steps 6000 --decay-from 0.3 --qat-from 0 --lr 5e-4 --seed 5 \
        "${dec[@]}" --init "$out/F2/ckpt.pt" --save-small "$part" "${resume[@]}"
    last=F3
fi
# G: the decoder alone on the frozen encoder's features, computed once per clip by tern's
#    engine (needs build/bin/tern-dev); the rest of the 2-hour budget. One torch thread: its
#    small matmuls ran slower on two.
if [ "$split" = train ]; then
    stage G train_decoder.py --threads 1 --jobs 2 --views 2 --steps 6000 --init "$out/$last/ckpt.pt"
else  # answers of up to ~700 tokens (JSON segments of 40 s dialogues): batches by tokens,
    # ~2 s a step, so fewer steps; the decoder is kept every 250 steps in checkpoints/ (fp16),
    # where a run cut short by the machine's time resumes
    part=checkpoints/$tag-G-part.pt
    resume=()
    [ -f "$part" ] && resume=(--resume "$part")
    stage G train_decoder.py --threads 1 --jobs 2 --views 1 --tokens 4000 --steps 2000 \
        --split "$split" --init "$out/$last/ckpt.pt" --save-small "$part" "${resume[@]}"
fi
echo "done: $(date +%T); $out/G/ckpt.pt"
