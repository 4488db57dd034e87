#!/usr/bin/env bash
# Einsum expressions on the command line: shapes, dtypes, scalar formatting, --random and --out,
# checked against NumPy when python3 has it.
source "$(dirname "$0")/common.bash"

# Scalars: sum over a 2x2 of ones times ones is exactly 4.
tnrt contract "ab,ab->" --shapes 2x2,2x2 --fill 1 --quiet
check "f32 scalar 'ab,ab->' = 4 (got '$(out)')" test "$(out)" == 4
tnrt contract "ab,ab->" --shapes 2x2,2x2 --fill 1 --dtype c128 --quiet
check "c128 scalar printed as re+imj (got '$(out)')" test "$(out)" == "4+0j"
tnrt contract "ab,ab->" --shapes 2x2,2x2 --fill 0.1 --dtype f64 --quiet
# 0.1 is not a binary fraction, so all 17 (f64) or 9 (f32) significant digits show.
check "f64 scalar printed with %.17g (got '$(out)')" grep -Eq '^0\.0[0-9]{17}$' "$tmp/out"
check "f64 scalar near 0.04" near "$(out)" 0.04 1e-15
tnrt contract "ab,ab->" --shapes 2x2,2x2 --fill 0.1 --quiet
check "f32 scalar printed with %.9g (got '$(out)')" grep -Eq '^0\.0[0-9]{9}$' "$tmp/out"
check "f32 scalar near 0.04" near "$(out)" 0.04 1e-8

# Shapes from --bond-dim/--label-size when --shapes is absent: a(3) b(2) c(5), ones: each of the
# 3x5 result entries is sum over b of 1 = 2, so the norm is 2*sqrt(15).
tnrt contract "ab,bc->ac" --label-size a=3,c=5 --fill 1 --dtype f64
check "tensor result reports its shape" grep -q 'result: tensor of shape \[3, 5\], norm 7.74596669' "$tmp/out"
check "tensor result points at --out" grep -q 'use --out' "$tmp/out"

# Implicit output (NumPy's rule): "ab,bc" is "ab,bc->ac".
tnrt contract "ab,bc" --shapes 2x3,3x4 --fill 1 --quiet
check "implicit output: shape [2, 4], norm sqrt(8*9) (got '$(out)')" test "$(out)" == "shape [2, 4] norm 8.48528137"

# --random with --out: the operands are reproducible, so recover them through tnrt itself and
# compare the product with NumPy. Operand i uses stream i of the seed, so "ab->ab" with seed 7
# gives operand 0; "xy,bc->bc" with a 1x1 first operand gives A00 * B, B being operand 1.
expect_rc 0 contract "ab,bc->ac" --shapes 2x3,3x4 --random 7 --dtype f64 --out "$tmp/c.npy"
check "--out wrote c.npy" test -s "$tmp/c.npy"
expect_rc 0 contract "ab->ab" --shapes 2x3 --random 7 --dtype f64 --out "$tmp/a.npy"
expect_rc 0 contract "xy->xy" --shapes 1x1 --random 7 --dtype f64 --out "$tmp/a00.npy"
expect_rc 0 contract "xy,bc->bc" --shapes 1x1,3x4 --random 7 --dtype f64 --out "$tmp/a00b.npy"
expect_rc 0 contract "ab,bc->ac" --shapes 2x3,3x4 --random 7 --dtype f64 --out "$tmp/c2.npy"
check "same seed, same bytes" cmp -s "$tmp/c.npy" "$tmp/c2.npy"
expect_rc 0 contract "ab,bc->ac" --shapes 2x3,3x4 --random 8 --dtype f64 --out "$tmp/c3.npy"
check "another seed, other values" bash -c "! cmp -s '$tmp/c.npy' '$tmp/c3.npy'"
if have_numpy; then
  python3 - "$tmp" >"$tmp/py" 2>&1 <<'PY'
import sys, numpy as np
d = sys.argv[1]
a, a00, a00b, c = (np.load(f"{d}/{n}.npy") for n in ("a", "a00", "a00b", "c"))
b = a00b / a00[0, 0]
fill = 0.5 ** 0.4  # the default --fill
assert a.shape == (2, 3) and b.shape == (3, 4) and c.shape == (2, 4) and c.dtype == np.float64
assert (a >= 0.9 * fill).all() and (a < 1.1 * fill).all(), a
assert (b >= 0.9 * fill - 1e-12).all() and (b < 1.1 * fill + 1e-12).all(), b
assert np.allclose(c, np.einsum("ab,bc->ac", a, b), rtol=1e-12, atol=0), (c, a @ b)
print("numpy ok")
PY
  check "matches numpy.einsum ($(tail -1 "$tmp/py"))" grep -q "numpy ok" "$tmp/py"
else
  skip_check "numpy comparison (python3 has no numpy)"
fi

# The built-in optimizers on a chain: every choice gives the same value.
for how in greedy exhaustive auto; do
  tnrt contract "ab,bc,cd,de->ae" --shapes 2x3,3x4,4x5,5x2 --fill 0.5 --dtype f64 --optimizer "$how" --quiet
  check "--optimizer $how: chain norm (got '$(out)')" test "$(out)" == "shape [2, 2] norm 7.5"
done

# Ellipsis, NumPy's broadcasting: (5,1,2,3) @ (7,3,4) -> (5,7,2,4); with ones every entry is 3,
# so the norm is 3*sqrt(280). Implicit output puts the ellipsis first, as explicit "...ik".
tnrt contract "...ij,...jk->...ik" --shapes 5x1x2x3,7x3x4 --fill 1 --dtype f64 --quiet
check "ellipsis broadcast: shape [5, 7, 2, 4], norm 3*sqrt(280) (got '$(out)')" test "$(out)" == "shape [5, 7, 2, 4] norm 50.19960159204453"
tnrt contract "...ij,...jk" --shapes 5x1x2x3,7x3x4 --fill 1 --dtype f64 --quiet
check "ellipsis, implicit output (got '$(out)')" test "$(out)" == "shape [5, 7, 2, 4] norm 50.19960159204453"
expect_rc 4 contract "...ij,...jk->...ik" --shapes 5x2x2x3,7x3x4 --fill 1
check "ellipsis extents 2 against 7 are a shape error ($(err))" grep -q "agree or be 1" "$tmp/err"
if have_numpy; then
  # operands from NumPy through --inputs (their shapes bind the ellipsis), result against np.einsum
  python3 - "$tmp" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(3)
np.save(f"{sys.argv[1]}/ea.npy", rng.random((4, 1, 2, 3)))
np.save(f"{sys.argv[1]}/eb.npy", rng.random((6, 3, 5)))
PY
  expect_rc 0 contract "...ij,...jk" --inputs "$tmp/ea.npy,$tmp/eb.npy" --dtype f64 --out "$tmp/ec.npy"
  python3 - "$tmp" >"$tmp/py" 2>&1 <<'PY'
import sys, numpy as np
d = sys.argv[1]
a, b, c = (np.load(f"{d}/{n}.npy") for n in ("ea", "eb", "ec"))
want = np.einsum("...ij,...jk", a, b)
assert c.shape == want.shape == (4, 6, 2, 5), (c.shape, want.shape)
assert np.allclose(c, want, rtol=1e-12, atol=0)
print("numpy ok")
PY
  check "ellipsis with --inputs matches numpy.einsum ($(tail -1 "$tmp/py"))" grep -q "numpy ok" "$tmp/py"
else
  ok "skipped: ellipsis numpy comparison (python3 has no numpy)"
fi
finish
