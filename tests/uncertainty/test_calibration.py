"""knowprobe.uncertainty.calibration: ECE, Brier and the reliability bins by hand; temperature
scaling recovers a known temperature."""

import numpy as np
import pytest

from knowprobe.uncertainty import calibration


def test_ece_and_brier_by_hand():
    confidence = np.array([0.95, 0.92, 0.55, 0.52, 0.58, 0.15])
    right = np.array([1, 0, 1, 1, 0, 0], bool)
    # bins [0.9, 1]: conf 0.935, acc 0.5; [0.5, 0.6): conf 0.55, acc 2/3; [0.1, 0.2): conf .15, acc 0
    expected = (2 * abs(0.5 - 0.935) + 3 * abs(2 / 3 - 0.55) + 1 * 0.15) / 6
    assert calibration.ece(confidence, right) == pytest.approx(expected)
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    assert calibration.brier(p, np.array([0, 1])) == pytest.approx(((0.09 + 0.04 + 0.01) + (0.01 + 0.81 + 0.64)) / 2)
    assert calibration.prior_kl(p, np.array([0, 0])) == pytest.approx(np.log(1 / 0.4))


def test_a_confidence_on_a_bin_edge_belongs_to_the_bin_it_closes():
    """Guo et al.'s bins are ((m - 1)/M, m/M]: 0.5 is in (0.4, 0.5], 0.3 in (0.2, 0.3], 0 in the first."""
    table = calibration.reliability(np.array([0.5, 0.3, 0.0, 1.0, 0.55]), np.array([1, 0, 0, 1, 0], bool), bins=10)
    assert table["n"].tolist() == [1, 0, 1, 0, 1, 1, 0, 0, 0, 1]
    # 0.5 (right) alone in its bin: gap 0.5; with half-open [a, b) bins it would share 0.55's (wrong)
    expected = (abs(1 - 0.5) + abs(0 - 0.3) + 0 + 0 + abs(0 - 0.55)) / 5
    assert calibration.ece([0.5, 0.3, 0.0, 1.0, 0.55], [1, 0, 0, 1, 0]) == pytest.approx(expected)


def test_temperature_scaling_recovers_a_known_temperature():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4000, 6)) * 3
    gold = np.array([rng.choice(6, p=row) for row in calibration.softmax(logits, 2.0)])
    assert calibration.fit_temperature(logits, gold) == pytest.approx(2.0, rel=0.1)
