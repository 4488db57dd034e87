"""Einsum expressions as numpy.einsum and torch.einsum take them, rewritten into what tnrt's C++ parser
takes: explicit output, no ellipsis (its dimensions become fresh labels, right-aligned with numpy's
broadcasting of size-1 dimensions), the interleaved form turned into letters."""

import functools
import string

from ._errors import ParseError, ShapeError


def _letter_pool():
    # ASCII first (numpy's interleaved mapping: 0-25 -> A-Z, 26-51 -> a-z), then Latin-1, Latin
    # Extended-A and Greek letters, all Unicode letters to the C++ parser.
    pool = list(string.ascii_uppercase + string.ascii_lowercase)
    for cp in list(range(0xC0, 0x250)) + list(range(0x391, 0x3CA)):
        c = chr(cp)
        if c.isalpha() and c not in pool:
            pool.append(c)
    return pool


_POOL = _letter_pool()


def _label_of_int(i):
    if isinstance(i, bool) or not isinstance(i, int) or i < 0:
        raise ParseError(f"interleaved einsum: subscript {i!r} is not a non-negative integer")
    if i >= len(_POOL):
        raise ParseError(f"interleaved einsum: subscript {i} is too large (at most {len(_POOL) - 1})")
    return _POOL[i]


def _sublist(sub):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        else:
            out.append(_label_of_int(s))
    return "".join(out)


def from_interleaved(args):
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ("AB,BC->AC", [a, b])."""
    args = list(args)
    operands, subs = [], []
    while len(args) >= 2:
        operands.append(args.pop(0))
        subs.append(_sublist(args.pop(0)))
    eq = ",".join(subs)
    if args:
        eq += "->" + _sublist(args.pop(0))
    return eq, operands


def _ndim(x):
    return len(x.shape)


def _split(eq, n):
    """`eq` without whitespace, its input terms (checked against `n` operands), its '->' (or '') and
    its output."""
    eq = "".join(eq.split())
    if eq.count("->") > 1:
        raise ParseError(f"einsum: '{eq}' has more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",") if lhs or n else []
    if len(terms) != n:
        raise ParseError(f"einsum: '{eq}' names {len(terms)} operands but {n} were given")
    return eq, terms, arrow, rhs


@functools.lru_cache(maxsize=1024)
def _plain(eq, n):
    """normalize's answer for an expression without '.' and `n` operands (it depends on nothing
    else), kept per expression: a repeated einsum skips the string work (with the path cache,
    _Prepared 4.8 -> 3.4 us a 2x2 call, bench/results/cpu-2026-12-07-einsum-caches). None when `eq`
    has a '.' (ellipsis: the shapes decide)."""
    if "." in eq:
        return None
    eq, terms, arrow, rhs = _split(eq, n)
    if not arrow:  # numpy's implicit output: the labels named once, sorted
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
    return ",".join(terms) + "->" + rhs


def normalize(eq, operands):
    """Returns (explicit expression without ellipsis, operands), squeezing the size-1 ellipsis
    dimensions an operand broadcasts against a larger extent."""
    if not isinstance(eq, str):
        raise ParseError(f"einsum: expected an expression string, got {type(eq).__name__}")
    plain = _plain(eq, len(operands))  # raises what _split would, and is not kept then
    if plain is not None:
        return plain, list(operands)
    eq, terms, arrow, rhs = _split(eq, len(operands))
    if "..." not in eq:  # _plain took every expression without '.'
        raise ParseError(f"einsum: '{eq}': '.' outside an ellipsis")
    used = set(c for c in eq if c not in ",.->")

    # Ellipsis: how many dimensions each operand's '...' covers, and their extents, right-aligned.
    covered = []
    for i, (t, x) in enumerate(zip(terms, operands)):
        if t.count("...") > 1 or t.replace("...", "").count("."):
            raise ParseError(f"einsum: term '{t}' has a malformed ellipsis")
        named = len(t.replace("...", ""))
        k = _ndim(x) - named if "..." in t else 0
        if k < 0:
            raise ShapeError(f"einsum: operand {i} has {_ndim(x)} dimensions but term '{t}' names {named}")
        covered.append(k)
    width = max(covered) if covered else 0
    if rhs.count("...") > 1 or rhs.replace("...", "").count("."):
        raise ParseError(f"einsum: output '{rhs}' has a malformed ellipsis")
    if arrow and width > 0 and "..." not in rhs:
        # numpy's rule: dimensions under an ellipsis are never summed away silently.
        raise ParseError(f"einsum: '{eq}': the output has no '...' for the {width} ellipsis dimension(s)")
    fresh = [c for c in _POOL if c not in used][:width]
    if len(fresh) < width:
        raise ParseError("einsum: too many labels for the ellipsis dimensions")
    # extent of each broadcast position (0 .. width-1, right-aligned)
    extents = [1] * width
    for i, (t, x, k) in enumerate(zip(terms, operands, covered)):
        start = t.index("...") if "..." in t else 0
        for j in range(k):
            e = int(x.shape[start + j])
            pos = width - k + j
            if e != 1:
                if extents[pos] not in (1, e):
                    raise ShapeError(f"einsum: ellipsis dimensions do not broadcast: {extents[pos]} against {e} (operand {i})")
                extents[pos] = e
    new_terms, new_ops = [], []
    for t, x, k in zip(terms, operands, covered):
        if "..." not in t:
            new_terms.append(t)
            new_ops.append(x)
            continue
        start = t.index("...")
        labels = ""
        squeeze = []
        for j in range(k):
            pos = width - k + j
            if int(x.shape[start + j]) == 1 and extents[pos] != 1:
                squeeze.append(start + j)  # broadcast: drop the size-1 dimension
            else:
                labels += fresh[pos]
        for axis in reversed(squeeze):
            x = x.squeeze(axis)
        new_terms.append(t.replace("...", labels))
        new_ops.append(x)
    if arrow:
        out = rhs.replace("...", "".join(fresh)) if "..." in rhs else rhs
    else:
        counts = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = "".join(fresh) + "".join(sorted(c for c, n in counts.items() if n == 1))
    # A broadcast position every operand squeezed has no label left: keep it out of the output too.
    present = set("".join(new_terms))
    out = "".join(c for c in out if c in present or c not in fresh)
    return ",".join(new_terms) + "->" + out, new_ops
