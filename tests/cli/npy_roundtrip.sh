#!/usr/bin/env bash
# --inputs/--out .npy round trips: operands from files (shape and dtype checked), results written
# atomically and only on success.
source "$(dirname "$0")/common.bash"

# tnrt alone: a result fed back through an identity contraction comes out byte for byte.
for t in f32 f64 c64 c128; do
  expect_rc 0 contract "ab->ab" --shapes 3x4 --random 11 --dtype "$t" --out "$tmp/x_$t.npy"
  expect_rc 0 contract "ab->ab" --dtype "$t" --inputs "$tmp/x_$t.npy" --out "$tmp/y_$t.npy"
  check "$t: identity round trip is byte-identical" cmp -s "$tmp/x_$t.npy" "$tmp/y_$t.npy"
done
# Transposing twice is the identity too.
expect_rc 0 contract "ab->ba" --inputs "$tmp/x_f64.npy" --dtype f64 --out "$tmp/xt.npy"
expect_rc 0 contract "ab->ba" --inputs "$tmp/xt.npy" --dtype f64 --out "$tmp/xtt.npy"
check "transpose twice round trip" cmp -s "$tmp/x_f64.npy" "$tmp/xtt.npy"

# Mismatches are i/o errors (7) and leave no output; a wrong count is a usage error (2).
expect_error 7 contract "ab->ab" --dtype f64 --inputs "$tmp/xt.npy" --shapes 3x4 --out "$tmp/bad.npy"
expect_error 7 contract "ab->ab" --dtype f32 --inputs "$tmp/x_f64.npy" --out "$tmp/bad.npy"
expect_error 7 contract "ab->ab" --dtype f64 --inputs "$tmp/missing.npy" --out "$tmp/bad.npy"
expect_error 2 contract "ab,bc->ac" --dtype f64 --inputs "$tmp/x_f64.npy" --out "$tmp/bad.npy"
check "no output written after failures" test ! -e "$tmp/bad.npy"
expect_error 7 contract "ab->ab" --shapes 3x4 --out "$tmp/no-such-dir/r.npy"
check "no temporary files left" test -z "$(find "$tmp" -name '*.tmp*')"

if have_numpy; then
  python3 - "$tmp" <<'PY' >"$tmp/py" 2>&1
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
np.save(f"{d}/a.npy", rng.uniform(0.5, 1.5, (3, 4)))
np.save(f"{d}/b.npy", rng.uniform(0.5, 1.5, (4, 5)))
np.save(f"{d}/ac.npy", (rng.uniform(0.5, 1.5, (3, 4)) + 1j * rng.uniform(-1, 1, (3, 4))).astype(np.complex64))
np.save(f"{d}/bc.npy", (rng.uniform(0.5, 1.5, (4, 5)) + 1j * rng.uniform(-1, 1, (4, 5))).astype(np.complex64))
np.save(f"{d}/fortran.npy", np.asfortranarray(rng.uniform(0.5, 1.5, (3, 4))))
print("made")
PY
  expect_rc 0 contract "ij,jk->ik" --shapes 3x4,4x5 --dtype f64 --inputs "$tmp/a.npy,$tmp/b.npy" --out "$tmp/c.npy"
  expect_rc 0 contract "ij,jk->ki" --shapes 3x4,4x5 --dtype c64 --inputs "$tmp/ac.npy,$tmp/bc.npy" --out "$tmp/cc.npy"
  expect_rc 0 contract "ij,jk->ik" --shapes 3x4,4x5 --dtype f64 --inputs "$tmp/fortran.npy,$tmp/b.npy" --out "$tmp/cf.npy"
  expect_rc 0 contract "ij->" --dtype f64 --inputs "$tmp/a.npy" --out "$tmp/s.npy"
  python3 - "$tmp" <<'PY' >"$tmp/py" 2>&1
import sys, numpy as np
d = sys.argv[1]
L = lambda n: np.load(f"{d}/{n}.npy")
a, b, c = L("a"), L("b"), L("c")
assert c.shape == (3, 5) and c.dtype == np.float64
assert np.allclose(c, a @ b, rtol=1e-13, atol=0)
cc = L("cc")
assert cc.shape == (5, 3) and cc.dtype == np.complex64, (cc.shape, cc.dtype)
ref = (L("ac").astype(np.complex128) @ L("bc").astype(np.complex128)).T
assert np.linalg.norm(cc - ref) <= 1e-5 * np.linalg.norm(ref)
assert np.allclose(L("cf"), L("fortran") @ b, rtol=1e-13, atol=0)
s = L("s")
assert s.shape == () and abs(s - a.sum()) <= 1e-12 * abs(a.sum())
print("numpy ok")
PY
  check "results match numpy ($(tail -1 "$tmp/py"))" grep -q "numpy ok" "$tmp/py"
else
  skip_check "numpy comparison (python3 has no numpy)"
fi
finish
