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


def test_tune_grids_and_selection_rule():
    """App. H.6: 18 configurations per method (6 x 3, or 18 alphas for MVP-V) containing the paper's
    choice; eligibility (<= 0.02 expected violation per step, Lemma 1, nonempty candidate sets) and
    ranking by R_+ (MVP-V: by policy value) on hand-made statistics."""
    import numpy as np

    from saferl.reproduce.svae import tune as T
    from saferl.tabular import learners as L

    for m in ("SVAE", "SUCBVI", "MVP-V + filter", "MVP-V"):
        g = T.grid(m)
        assert len(g) == 18 and len(set(g)) == 18
        assert any(np.isclose(a, L.NAVIGATION[m][0], rtol=0.1) and b == L.NAVIGATION[m][1] for a, b in g)
    H = 4
    vstars = np.array([2.0])
    # 4 configurations x 1 environment x 1 seed: per-episode values and expected violations
    value = np.array([[1.0, 2.0, 2.0], [2.0, 2.0, 2.0], [1.5, 1.5, 1.5], [0.0, 0.0, 0.0]])[:, None, None]
    exp_viol = np.array([[0.0] * 3, [0.1] * 3, [0.0] * 3, [0.0] * 3])[:, None, None]  # 0.1/H > 0.02
    res = {
        "value": value,
        "exp_viol": exp_viol,
        "lemma1_bad": np.array([False, False, True, False])[:, None, None],
        "empty_bad": np.zeros((4, 1, 1), bool),
    }
    rows = T._scores("SVAE", res, vstars, H)
    assert [r["eligible"] for r in rows] == [True, False, False, True]
    assert np.isclose(rows[0]["R_+(K)"], 1.0) and np.isclose(rows[2]["R_+(K)"], 1.5)
    assert np.isclose(rows[1]["expected violation per step"], 0.025)
    assert T._rank("SVAE", rows) == [0, 3, 1, 2]  # eligible by R_+ (1 < 6), then the rest by R_+ (0 < 1.5)
    assert T._rank("MVP-V", T._scores("MVP-V", res, vstars, H)) == [1, 0, 2, 3]  # by mean policy value


def test_tune_option_only_for_targets_that_accept_it(tmp_path):
    with pytest.raises(ValueError, match="does not support --tune"):
        reproduce.run("svae-table2", "smoke", tmp_path, tune=True)
