"""Smoke runs of the svae-* reproduce targets: keys present, numbers finite, figures written."""

import math

import pytest

from saferl import reproduce


def _finite(v):
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    if isinstance(v, (int, float)):
        return math.isfinite(v)
    return True


EXPECTED = {
    "svae-table2": {"Var*", "K Var*", "Sigma_V", "dR(K) Hoeffding-P", "dR(K) Hoeffding"},
    "svae-table3": {"p", "Delta_c", "C", "Root executions", "Successor visits", "Viol(K)"},
    "svae-fig6": {"d", "method", "Entries after detection", "Viol(K)", "R(K)"},
    "svae-table1": {"method", "R(K)/10^3", "R_+(K)/10^3", "Viol(K)/10^3"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_target_smoke(name, tmp_path):
    assert name in reproduce.targets()
    res = reproduce.run(name, "smoke", tmp_path)
    assert res["rows"]
    for row in res["rows"]:
        assert EXPECTED[name] <= set(row), set(row)
        assert all(_finite(v) for v in row.values())
    for fig in res["figures"]:
        assert (tmp_path / fig).stat().st_size > 0
    assert (tmp_path / "results.json").exists()
    if name == "svae-table3":
        assert all(r["root executions after exclusion"] == 0 for r in res["rows"])
        assert all(abs(r["C"] - 2 / (r["p"] * r["Delta_c"] ** 2)) < 1e-6 for r in res["rows"])
    if name == "svae-fig6":
        svae = [r for r in res["rows"] if r["method"] == "SVAE" and r["Entries after detection"]]
        assert all(r["Entries after detection"]["mean"] == 0 for r in svae)
