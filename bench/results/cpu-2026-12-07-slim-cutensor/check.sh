#!/usr/bin/env bash
# From the repo root, here (no GPU): scripts/gpu-host/slim_cutensor.py on the cutensor-cu13 wheel's
# libcutensor.so.2, checked with NVIDIA's cuobjdump (CUOBJDUMP; the nvidia-cuda-cuobjdump wheel has one):
# the slim library's .nv_fatbin parses and holds the same sm_90/sm_90a cubins (by sha256, as a multiset),
# and every fatbin inside cuTENSOR's kernel store (.cask_resource, which cuobjdump does not scan in a
# library) parses alone and keeps the same sm_90 cubins and sm_75 PTX; then the sizes whole and xz -9;
# last, both loaded here through ctypes (no GPU): version and cutensorCreate's answer.
# Output: check.txt
set -euo pipefail
CO=${CUOBJDUMP:-cuobjdump}
lib=$(python3 -c "import glob,site;print(sorted(glob.glob(site.getsitepackages()[0]+'/cutensor/lib/libcutensor.so.2'))[0])")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
python3 scripts/gpu-host/slim_cutensor.py "$lib" "$W/slim.so.2"
echo "--- the .nv_fatbin section (cuobjdump -lelf, by architecture)"
for t in orig slim; do f=$lib; [[ $t == slim ]] && f=$W/slim.so.2
  echo "$t: $($CO -lelf "$f" | sed 's/.*\.\(sm_[0-9a-z]*\)\.cubin$/\1/' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  mkdir -p "$W/x-$t" && (cd "$W/x-$t" && $CO -xelf all "$f" > /dev/null)
  (cd "$W/x-$t" && for c in *sm_90*.cubin; do sha256sum < "$c" | cut -c1-16; done | sort > "$W/h-$t")
done
cmp -s "$W/h-orig" "$W/h-slim" && echo "sm_90/sm_90a cubins: the same $(wc -l < "$W/h-orig") in both" || { echo "sm_90 cubins DIFFER"; exit 1; }
echo "--- the fatbins inside .cask_resource, each alone"
mkdir -p "$W/o" "$W/s"
python3 - "$lib" "$W/slim.so.2" "$W" <<'PY'
import subprocess, sys
sys.path.insert(0, "scripts/gpu-host")
from slim_cutensor import fatbins
for tag, path in (("o", sys.argv[1]), ("s", sys.argv[2])):
    d = open(path, "rb").read()
    sec = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    line = next(l for l in sec.splitlines() if ".cask_resource" in l).split("]")[1].split()
    lo = int(line[3], 16); hi = lo + int(line[4], 16)
    n = 0
    for j, _, end in fatbins(d):
        if lo <= j < hi:
            open(f"{sys.argv[3]}/{tag}/{j:x}.fatbin", "wb").write(d[j:end]); n += 1  # same names: cuobjdump names what it extracts after them
    print(f"{'orig' if tag == 'o' else 'slim'}: {n} fatbins in .cask_resource")
PY
bad=0; diff=0; kept=0
for o in "$W"/o/*.fatbin; do s=$W/s/$(basename "$o")
  $CO -lelf -lptx "$s" > /dev/null 2>&1 || bad=$((bad + 1))
  rm -rf "$W/xo" "$W/xs"; mkdir -p "$W/xo" "$W/xs"
  (cd "$W/xo" && $CO -xelf all "$o" > /dev/null 2>&1; $CO -xptx all "$o" > /dev/null 2>&1) || true
  (cd "$W/xs" && $CO -xelf all "$s" > /dev/null 2>&1; $CO -xptx all "$s" > /dev/null 2>&1) || true
  for g in $(ls "$W/xs"); do case $g in *sm_90*|*sm_75.ptx) kept=$((kept + 1)); cmp -s "$W/xo/$g" "$W/xs/$g" || diff=$((diff + 1));; esac; done
done
echo "slim fatbins cuobjdump could not list: $bad; kept sm_90 cubins and sm_75 PTX compared: $kept, differing: $diff"
echo "--- sizes"
for t in orig slim; do f=$lib; [[ $t == slim ]] && f=$W/slim.so.2
  echo "$t: $(stat -c %s "$f") bytes, xz -9: $(xz -T0 -9 -c "$f" | wc -c) bytes"; done
echo "--- loaded here (no GPU, no driver): the same answers from both"
for t in orig slim; do f=$lib; [[ $t == slim ]] && f=$W/slim.so.2
  python3 - "$f" "$t" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cutensorGetVersion.restype = ctypes.c_size_t
lib.cutensorGetErrorString.restype = ctypes.c_char_p
handle = ctypes.c_void_p()
rc = lib.cutensorCreate(ctypes.byref(handle))
print(f"{sys.argv[2]}: cutensorGetVersion {lib.cutensorGetVersion()}, cutensorCreate {lib.cutensorGetErrorString(rc).decode()}")
PY
done
