#!/usr/bin/env python3
"""Validates UpdatableQR's column updates against SciPy's qr_insert / qr_delete / qr_update.

Runs the helper executable (argv[1]) on random data for several operations and positions and
compares R (up to the signs of its rows) and the least-squares solution with SciPy's. Exits 0
on success, 1 on a mismatch, and 77 (ctest SKIP_RETURN_CODE) with a message when SciPy is not
importable.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.linalg as sl
except ImportError as e:  # pragma: no cover
    print(f"SKIP: scipy is not importable ({e}); install scipy to run this check")
    sys.exit(77)

TOL = 1e-10


def run_helper(helper, op, k, p, a, b, u=None, v=None):
    m, n = a.shape
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(f"{op} {k} {p} {m} {n}\n")
        for x in [a, b.reshape(-1, 1)] + [y for y in (u, v) if y is not None]:
            f.write(" ".join(repr(float(t)) for t in x.flatten(order="F")) + "\n")
        name = f.name
    try:
        out = subprocess.run([helper, name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(name)
    tokens = out.split()
    assert tokens[0] == "R"
    rows, cols = int(tokens[1]), int(tokens[2])
    r = np.array([float(t) for t in tokens[3:3 + rows * cols]]).reshape(rows, cols)
    pos = 3 + rows * cols
    assert tokens[pos] == "x"
    nx = int(tokens[pos + 1])
    x = np.array([float(t) for t in tokens[pos + 2:pos + 2 + nx]])
    return r, x


def sign_normalized(r):
    s = np.sign(np.diag(r))
    s[s == 0] = 1
    return r * s[:, None]


def compare(label, r_ours, x_ours, q_ref, r_ref, b):
    n = r_ours.shape[1]
    r_ref = r_ref[:n, :n]
    err_r = np.linalg.norm(sign_normalized(r_ours) - sign_normalized(r_ref)) / np.linalg.norm(r_ref)
    x_ref = sl.solve_triangular(r_ref, (q_ref.T @ b)[:n])
    err_x = np.linalg.norm(x_ours - x_ref) / np.linalg.norm(x_ref)
    ok = err_r < TOL and err_x < TOL
    print(f"{label:40s} |R - R_scipy|/|R| = {err_r:.2e}  |x - x_scipy|/|x| = {err_x:.2e}  "
          f"{'ok' if ok else 'MISMATCH'}")
    return ok


def main():
    helper = sys.argv[1]
    rng = np.random.default_rng(6)
    ok = True
    m, n = 40, 12
    for k, p in [(0, 1), (5, 3), (12, 4), (3, 9)]:
        a = rng.standard_normal((m, n))
        b = rng.standard_normal(m)
        q, r = sl.qr(a)
        u = rng.standard_normal((m, p))
        q2, r2 = sl.qr_insert(q, r, u, k, which="col")
        r_ours, x_ours = run_helper(helper, "add", k, p, a, b, u=u)
        ok &= compare(f"qr_insert col k={k} p={p}", r_ours, x_ours, q2, r2, b)
    for k, p in [(0, 1), (4, 3), (12 - 2, 2), (1, 10)]:
        a = rng.standard_normal((m, n))
        b = rng.standard_normal(m)
        q, r = sl.qr(a)
        q2, r2 = sl.qr_delete(q, r, k, p, which="col")
        r_ours, x_ours = run_helper(helper, "remove", k, p, a, b)
        ok &= compare(f"qr_delete col k={k} p={p}", r_ours, x_ours, q2, r2, b)
    for r_k in [1, 3, 7]:
        a = rng.standard_normal((m, n))
        b = rng.standard_normal(m)
        q, r = sl.qr(a)
        u = 0.3 * rng.standard_normal((m, r_k))
        v = rng.standard_normal((n, r_k))
        q2, r2 = sl.qr_update(q, r, u, v)
        r_ours, x_ours = run_helper(helper, "rank", 0, r_k, a, b, u=u, v=v)
        ok &= compare(f"qr_update rank {r_k}", r_ours, x_ours, q2, r2, b)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
