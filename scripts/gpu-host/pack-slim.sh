#!/usr/bin/env bash
# Here (no GPU): cuTENSOR for an sm_90 GPU host (H100, H200) in one part instead of six. The library
# from the cutensor-cu13 wheel (installed by scripts/setup.sh) goes through slim_cutensor.py (the CUDA
# code an sm_90 GPU never loads dropped from its fatbins; the sm_90 SASS and the PTX it may compile
# kept byte for byte), then xz -9 into DEST (default .gpu-host-slim) as parts of at most PART_MIB MiB
# (default 60: one part, 43.3 MB for cuTENSOR 2.8.1 against 181.6 MB for the whole library at xz -9), with a
# MANIFEST (the slim library's sha256) and ../shared/gpu-host/unpack.sh, which rebuilds and checks it
# on the host as it does pack.sh's parts. session.sh finds the folder like any .gpu-host-N. DEST goes
# into .git/info/exclude. Beside bin-tools.tar.xz (15-17 MB) and the working tree (about 3.3 MB
# without bench/results) it fits one device call: cuTENSOR and the tools staged, and the reference run,
# in the first call of a sitting.
#   usage: bash scripts/gpu-host/pack-slim.sh [DEST]     env: PART_MIB (60), ARCH (90), UNPACK (the unpack.sh to copy)
# Not yet run on a GPU (2026-12-07): the first sitting that uses it should check `session.sh env ref`
# and fall back to pack.sh's six parts if cuTENSOR fails there.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-.gpu-host-slim}
unpack=${UNPACK:-../shared/gpu-host/unpack.sh}
[[ -f $unpack ]] || { echo "pack-slim: no $unpack (set UNPACK to the shared unpack.sh)" >&2; exit 1; }
lib=$(python3 -c "import glob,os,site;r=site.getsitepackages()+[site.getusersitepackages()];h=[p for d in r for p in glob.glob(os.path.join(d,'cutensor','lib','libcutensor.so.2*')) if not os.path.islink(p)];print(sorted(h)[0] if h else '')")
[[ -n $lib ]] || { echo "pack-slim: libcutensor.so.2 not found; install it first: python3 -m pip install cutensor-cu13" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 scripts/gpu-host/slim_cutensor.py "$lib" "$tmp/libcutensor.so.2" --arch "${ARCH:-90}"
xz -T0 -9 -c "$tmp/libcutensor.so.2" > "$tmp/lib.xz"
mkdir -p "$dest"
rm -f "$dest"/part-* "$dest"/MANIFEST
split -b "${PART_MIB:-60}M" -d -a 2 "$tmp/lib.xz" "$dest/part-"
{ echo "name libcutensor.so.2"; echo "sha256 $(sha256sum "$tmp/libcutensor.so.2" | cut -d' ' -f1)"; ls "$dest" | grep '^part-' | sed 's/^/part /'; } > "$dest/MANIFEST"
cp "$unpack" "$dest/unpack.sh"
exclude=$(git rev-parse --git-dir)/info/exclude
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$dest/" "$exclude" 2>/dev/null || echo "/$dest/" >> "$exclude"
echo "pack-slim: $(ls "$dest" | grep -c '^part-') part(s) in $dest ($(du -sh "$dest" | cut -f1)) from $lib"
