#!/usr/bin/env bash
# The device side of a GPU lease (python -m fedlib.repro.lease); run from the repository root.
#
# Prepared here, once:   python -m fedlib.repro.lease --check
#                        python -m fedlib.repro.lease --dry-run --minutes 8.5 --measure-s 20 --store .fedlib-store
#                        python -m fedlib.repro.lease --pack-data .lease --datasets cifar10
#                          (parts as large as the room the committed tree leaves in a 64 MiB call: 24 MiB, six
#                          parts, on 2026-11-26 after the third lease)
# On the device, one call per data part but the last, each carrying that part (carry: .lease/parts/data-00):
#                        scripts/lease.sh stash
# then the lease itself, carrying the last part and .lease/manifest.json (carry: .lease/parts/data-05, .lease/manifest.json):
#                        scripts/lease.sh run --minutes 8.5 --measure-s 20 --max-files 6
#   (--measure-s 20: the measuring minute times the vectorized round in both layouts, [lease] memory_formats,
#   about 8 s each, and the faster trains the runs the lease starts)
# Call each within the machine's 30 s warm time after the last (2026-11-26: a start took 30 s, a stash 0.2-5 s).
# The next lease (benchmarks/results_gpu.md, "What it means for the next lease"): the TF32 check first (FedAvg
#   seed 0, compiled: ≈ 5 min, and the first whole-round timing of compiled TF32), then FedAvg seed 2 resumes
#   from round 80.  The round was profiled on the third
#   lease (benchmarks/leases/20261126-110532/round_profile.json); to profile again, on the warm machine after the
#   lease (the data stays unpacked there):
#                        FEDLIB_DATA=/tmp/fedlib-lease/data timeout -k 5 240 python3 benchmarks/profile_gpu_round.py \
#                          --out $OUT/round_profile.json
#   (without a lease first: python3 -c "from fedlib.repro.lease import unpack_data; unpack_data(
#    '/tmp/fedlib-lease/parts', '/tmp/fedlib-lease/data')" after `scripts/lease.sh stash` of the last part)
# A second, shorter `run` on the still-warm machine continues from the same store (/tmp/fedlib-lease/store).
# The parts stay on the warm machine between calls (/tmp/fedlib-lease); the lease checks each against the
# manifest's sha256 before anything trains and names a missing one.  Its outputs (lease.json, store-NN.tar,
# lease.log: 8 files at most) come back from $OUT; here: python -m fedlib.repro.lease --import <that folder>,
# then commit lease.json and the store parts as benchmarks/leases/<started>/: the next lease resumes from them.
# python -m fedlib.repro.lease --prune benchmarks/leases then deletes the earlier parts the newest supersedes, so
# the committed tree still travels beside a data part.  The device's copy has no .git: the lease records a
# fingerprint of fedlib/ (lease.json "code"), and --import finds the commit from it.
set -euo pipefail
STASH=/tmp/fedlib-lease
mkdir -p "$STASH/parts"
if compgen -G ".lease/parts/data-*" >/dev/null; then cp .lease/parts/data-* "$STASH/parts/"; fi
if [ -f .lease/manifest.json ]; then cp .lease/manifest.json "$STASH/parts/"; fi
what="${1:-run}"
shift || true
if [ "$what" = stash ]; then ls -l "$STASH/parts"; exit 0; fi
if [ "$what" != run ]; then echo "usage: scripts/lease.sh stash | run --minutes M [lease options]" >&2; exit 2; fi
OUT="${OUT:-$STASH/out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD" FEDLIB_CACHE="$STASH/cache" MPLBACKEND=Agg
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
resume=()  # the committed bring-backs of earlier leases (oldest first), then one carried in .lease/resume
for d in benchmarks/leases/*/ .lease/resume/; do
    if [ -f "$d/lease.json" ]; then resume+=(--resume "$d"); fi
done
set -o pipefail
python3 -m fedlib.repro.lease --data-parts "$STASH/parts" --data-root "$STASH/data" --store "$STASH/store" \
    --out "$OUT" "${resume[@]}" "$@" 2>&1 | tee "$OUT/lease.log"
