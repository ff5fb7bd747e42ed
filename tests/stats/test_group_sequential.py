"""group_sequential_design against R's rpact; crossing probabilities against scipy and a brute-force simulation.

Reference values: rpact 3.3.4 (the issue asked for 3.3.4, and it is the version used), R 4.2.2 Patched
(2022-11-10 r83330), Debian's r-cran-rpact, computed once; the tests never call R. For each design below the R
call is given; then ``d$criticalValues`` (efficacy), ``d$futilityBounds`` (the interim futility bounds; rpact's
-6 for "none" and its NA are listed as nan), and from ``ch <- getDesignCharacteristics(d)``:
``ch$inflationFactor``, ``ch$averageSampleNumber1``, ``ch$averageSampleNumber0``. All printed with
``formatC(x, digits = 10, format = "f")``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cogeval import stats
from cogeval.errors import InputError
from cogeval.stats import GroupSequentialDesign, group_sequential_design
from cogeval.stats.group_sequential import COLUMNS

nan = math.nan

RPACT = [
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility=None),
     [3.7103028733, 2.5114274845, 1.9930474833],
     [nan, nan],
     1.0127948127, 0.8655689752, 1.0107179426),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending="pocock", futility=None),
     [2.2794282389, 2.2949111387, 2.2959395871],
     [nan, nan],
     1.1704193721, 0.8194152628, 1.1585570249),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=None),
     [2.7729212946, 2.3472722098, 2.0619137660],
     [nan, nan],
     1.0449125563, 0.8231383301, 1.0400749971),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", typeBetaSpending = "bsOF", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility="obrien-fleming"),
     [3.7103028733, 2.5114274845, 1.9930474833],
     [-0.2361446099, 1.1703720312],
     1.1043340229, 0.8752099468, 0.6274095151),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending="pocock", futility="pocock"),
     [2.2794282389, 2.2949111387, 2.2959395871],
     [0.5658515669, 1.4734358587],
     1.3843592584, 0.8002680006, 0.6087025498),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, typeBetaSpending = "bsKD", gammaB = 2, bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=("kim-demets", 2)),
     [2.7729212946, 2.3472722098, 2.0619137660],
     [-0.3185049012, 0.9942913880],
     1.0934294308, 0.8102113410, 0.6436326092),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility=None),
     [4.8768849488, 3.3570119217, 2.6802800670, 2.2898167744, 2.0310320631],
     [nan, nan, nan, nan],
     1.0247198915, 0.8236627375, 1.0213558275),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending="pocock", futility=None),
     [2.4379766881, 2.4268138632, 2.4101941362, 2.3966492936, 2.3859997019],
     [nan, nan, nan, nan],
     1.2126130991, 0.7957106785, 1.1981109445),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=None),
     [3.0902323062, 2.7141115740, 2.4727772102, 2.2798633948, 2.1140283570],
     [nan, nan, nan, nan],
     1.0633993792, 0.7875731257, 1.0570189809),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", typeBetaSpending = "bsOF", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility="obrien-fleming"),
     [4.8768849488, 3.3570119217, 2.6802800670, 2.2898167744, 2.0310320631],
     [-1.2921473671, 0.1697040261, 0.9625049108, 1.5264932862],
     1.1550034214, 0.8326083294, 0.5840948199),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending="pocock", futility="pocock"),
     [2.4379766881, 2.4268138632, 2.4101941362, 2.3966492936, 2.3859997019],
     [-0.0394242771, 0.7050194270, 1.2846801584, 1.7993190079],
     1.4778673188, 0.7541817272, 0.5289361594),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, typeBetaSpending = "bsKD", gammaB = 2, bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=("kim-demets", 2)),
     [3.0902323062, 2.7141115740, 2.4727772102, 2.2798633948, 2.1140283570],
     [-1.0751089106, -0.0231783013, 0.7579645026, 1.4291529278],
     1.1333083168, 0.7678252634, 0.5914374495),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility=None),
     [6.9913517071, 4.8768851981, 3.9296823069, 3.3670790717, 2.9893298224, 2.7148089930, 2.5040773973, 2.3358292058, 2.1975033805, 2.0811756626],
     [nan, nan, nan, nan, nan, nan, nan, nan, nan],
     1.0377668156, 0.7943315128, 1.0332512723),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending="pocock", futility=None),
     [2.6551100480, 2.6232419536, 2.5896367207, 2.5620787069, 2.5397473350, 2.5214041099, 2.5060862675, 2.4930974022, 2.4819340780, 2.4722269699],
     [nan, nan, nan, nan, nan, nan, nan, nan, nan],
     1.2474200053, 0.7804789070, 1.2308582263),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=None),
     [3.4807564043, 3.1523138657, 2.9508220181, 2.7935474887, 2.6610893235, 2.5449946448, 2.4406352565, 2.3451468870, 2.2566127554, 2.1736773178],
     [nan, nan, nan, nan, nan, nan, nan, nan, nan],
     1.0811596347, 0.7622349046, 1.0734563680),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", typeBetaSpending = "bsOF", bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility="obrien-fleming"),
     [6.9913517071, 4.8768851981, 3.9296823069, 3.3670790717, 2.9893298224, 2.7148089930, 2.5040773973, 2.3358292058, 2.1975033805, 2.0811756626],
     [-2.9176927938, -1.2686499818, -0.4173363759, 0.1500317068, 0.5817613858, 0.9351586462, 1.2376437285, 1.5053813416, 1.7581680506],
     1.1982242670, 0.7988254858, 0.5416589567),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asP", typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending="pocock", futility="pocock"),
     [2.6551100480, 2.6232419536, 2.5896367207, 2.5620787069, 2.5397473350, 2.5214041099, 2.5060862675, 2.4930974022, 2.4819340780, 2.4722269699],
     [-0.7524528153, -0.1841463814, 0.2570012030, 0.6260961029, 0.9493148294, 1.2421561242, 1.5164218093, 1.7850490487, 2.0719323396],
     1.5521230781, 0.7203223548, 0.4772172732),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asKD", gammaA = 2, typeBetaSpending = "bsKD", gammaB = 2, bindingFutility = FALSE)
    (dict(looks=10, alpha=0.025, power=0.8, sided=1, spending=("kim-demets", 2), futility=("kim-demets", 2)),
     [3.4807564043, 3.1523138657, 2.9508220181, 2.7935474887, 2.6610893235, 2.5449946448, 2.4406352565, 2.3451468870, 2.2566127554, 2.1736773178],
     [-1.9200122080, -1.1152004576, -0.5413902341, -0.0655136104, 0.3523032446, 0.7312979740, 1.0831553047, 1.4176366008, 1.7517953268],
     1.1696580347, 0.7351181045, 0.5516877295),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility="pocock"),
     [4.8768849488, 3.3570119217, 2.6802800670, 2.2898167744, 2.0310320631],
     [-0.1264420611, 0.5811509131, 1.1237429655, 1.5770845129],
     1.3138270647, 0.8695841860, 0.5080332682),
    # d <- getDesignGroupSequential(kMax = 4, alpha = 0.05, beta = 0.1, sided = 1, typeOfDesign = "asKD", gammaA = 1.5, typeBetaSpending = "bsKD", gammaB = 0.5, informationRates = c(0.2, 0.45, 0.7, 1), bindingFutility = FALSE)
    (dict(looks=4, alpha=0.05, power=0.9, sided=1, spending=("kim-demets", 1.5), futility=("kim-demets", 0.5), information=[0.2, 0.45, 0.7, 1]),
     [2.6141768768, 2.2516527250, 2.0346974209, 1.8092910126],
     [-0.1481710586, 0.5270282063, 1.1102935947],
     1.4030133159, 0.7520624358, 0.5947840382),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, beta = 0.2, sided = 1, typeOfDesign = "asOF", typeBetaSpending = "bsOF", informationRates = c(0.3, 0.6, 1), bindingFutility = FALSE)
    (dict(looks=3, alpha=0.025, power=0.8, sided=1, spending="obrien-fleming", futility="obrien-fleming", information=[0.3, 0.6, 1]),
     [3.9285725426, 2.6699720100, 1.9810244963],
     [-0.4698699243, 0.9337964798],
     1.0853873996, 0.8850949299, 0.6198983880),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asOF", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.05, power=0.8, sided=2, spending="obrien-fleming", futility=None),
     [4.8768849488, 3.3570119217, 2.6802800670, 2.2898167744, 2.0310320482],
     [nan, nan, nan, nan],
     1.0247198810, 0.8236623223, 1.0179917572),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asP", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.05, power=0.8, sided=2, spending="pocock", futility=None),
     [2.2794282389, 2.2949111387, 2.2959383503],
     [nan, nan],
     1.1704200775, 0.8193934792, 1.1466953712),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asKD", gammaA = 2, typeBetaSpending = "bsKD", gammaB = 2, bindingFutility = FALSE)
    (dict(looks=10, alpha=0.05, power=0.8, sided=2, spending=("kim-demets", 2), futility=("kim-demets", 2)),
     [3.4807564043, 3.1523138657, 2.9508220181, 2.7935474738, 2.6610892490, 2.5449944362, 2.4406347796, 2.3451459631, 2.2566111609, 2.1736747101],
     [nan, nan, nan, nan, 0.2423095892, 0.5840386434, 1.0033166312, 1.3781288733, 1.7359907082],
     1.1379226564, 0.7398788044, 0.7646049398),
    # d <- getDesignGroupSequential(kMax = 10, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asKD", gammaA = 2, typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=10, alpha=0.05, power=0.8, sided=2, spending=("kim-demets", 2), futility="pocock"),
     [3.4807564043, 3.1523138657, 2.9508220181, 2.7935474738, 2.6610892490, 2.5449944362, 2.4406347796, 2.3451459631, 2.2566111609, 2.1736747101],
     [nan, nan, 0.1928723900, 0.3752059378, 0.6998736589, 1.0325376511, 1.3161544238, 1.5728282981, 1.8292776931],
     1.2891124288, 0.7521174878, 0.6830477671),
    # d <- getDesignGroupSequential(kMax = 5, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asOF", typeBetaSpending = "bsOF", bindingFutility = FALSE)
    (dict(looks=5, alpha=0.05, power=0.8, sided=2, spending="obrien-fleming", futility="obrien-fleming"),
     [4.8768849488, 3.3570119217, 2.6802800670, 2.2898167744, 2.0310320482],
     [nan, 0.2915710106, 0.9222366892, 1.5176415281],
     1.1543964679, 0.8349047074, 0.7340879074),
    # d <- getDesignGroupSequential(kMax = 3, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asP", typeBetaSpending = "bsP", bindingFutility = FALSE)
    (dict(looks=3, alpha=0.05, power=0.8, sided=2, spending="pocock", futility="pocock"),
     [2.2794282389, 2.2949111387, 2.2959383503],
     [0.6061246815, 1.4568533409],
     1.3910039206, 0.8029354293, 0.7479746312),

]


def _label(case):
    kwargs = case[0]
    futility = kwargs["futility"]
    return f"{kwargs['sided']}-sided {kwargs['spending']}/{futility} {kwargs['looks']} looks" + (
        " (information)" if "information" in kwargs else "")


@pytest.mark.parametrize(("kwargs", "efficacy", "futility", "inflation", "asn1", "asn0"), RPACT,
                         ids=[_label(case) for case in RPACT])
def test_matches_rpact(kwargs, efficacy, futility, inflation, asn1, asn0):
    d = group_sequential_design(**kwargs)
    np.testing.assert_allclose(d.efficacy, efficacy, rtol=0, atol=1e-5)
    np.testing.assert_allclose(d.futility[:-1], futility, rtol=0, atol=1e-5)  # nan where rpact has none
    assert d.futility[-1] == d.efficacy[-1]  # the last look: every design stops there
    assert (d.inflation_factor, d.expected_fraction_h1, d.expected_fraction_h0) == pytest.approx(
        (inflation, asn1, asn0), abs=1e-5)
    np.testing.assert_allclose(d.information, kwargs.get("information", np.arange(1, d.looks + 1) / d.looks))


def test_two_looks_and_the_rpact_docstring_numbers():
    # d <- getDesignGroupSequential(kMax = 2, alpha = 0.05, beta = 0.2, sided = 2, typeOfDesign = "asKD", gammaA = 2,
    #   typeBetaSpending = "bsKD", gammaB = 2): criticalValues 2.4977054744, 2.0183102563; futilityBounds 0.4542615784;
    #   getDesignCharacteristics(d): 1.0614010881, 0.8629620260, 0.8688313893
    d = group_sequential_design(2, alpha=0.05, sided=2, spending=("kim-demets", 2), futility=("kim-demets", 2))
    np.testing.assert_allclose(d.efficacy, [2.4977054744, 2.0183102563], atol=1e-5)
    assert d.futility[0] == pytest.approx(0.4542615784, abs=1e-5)
    assert (d.inflation_factor, d.expected_fraction_h1, d.expected_fraction_h0) == pytest.approx(
        (1.0614010881, 0.8629620260, 0.8688313893), abs=1e-5)
    # the same one-sided at alpha = 0.025: futilityBounds 0.3909529921; 1.0560764643, 0.8596056217, 0.7084509383
    d = group_sequential_design(2, spending=("kim-demets", 2), futility=("kim-demets", 2))
    assert d.futility[0] == pytest.approx(0.3909529921, abs=1e-5)
    assert (d.inflation_factor, d.expected_fraction_h1, d.expected_fraction_h0) == pytest.approx(
        (1.0560764643, 0.8596056217, 0.7084509383), abs=1e-5)


def _rectangle(lower, upper, t, drift):
    """P(lower_j < Z_j < upper_j for every look j), Z_j = B(t_j)/√t_j: scipy's multivariate normal (Genz)."""
    from scipy.stats import multivariate_normal

    t = np.asarray(t, dtype=float)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    mvn = multivariate_normal(mean=drift * np.sqrt(t), cov=cov, allow_singular=False)
    return float(mvn.cdf(np.asarray(upper, dtype=float), lower_limit=np.asarray(lower, dtype=float),
                         rng=np.random.default_rng(0)))


def test_alpha_power_and_sample_size_equal_scipy_multivariate_normal():
    # Independent of the grid: the same probabilities as rectangles of the looks' joint normal distribution.
    d = group_sequential_design(3, spending="obrien-fleming", futility="obrien-fleming")
    t, c, f = d.information, d.efficacy, d.futility
    big = np.full(3, 40.0)
    # type-I error ignoring the futility bounds (non-binding): 1 - P(Z_j < c_j for all j) = alpha
    assert 1 - _rectangle(-big, c, t, 0.0) == pytest.approx(0.025, abs=2e-6)
    # power with the futility bounds obeyed: sum over k of P(f_j < Z_j < c_j for j < k, Z_k >= c_k)
    power = 0.0
    for k in range(3):
        low = np.r_[f[:k], c[k], -big[k + 1:]]
        high = np.r_[c[:k], 40.0, big[k + 1:]]
        power += _rectangle(low, high, t, d.drift)
    assert power == pytest.approx(0.8, abs=2e-5)
    # expected fraction under H1: inflation × (t_1 + Σ_k (t_{k+1} - t_k) P(going on after look k))
    going = [_rectangle(np.r_[f[:k + 1], -big[k + 1:]], np.r_[c[:k + 1], big[k + 1:]], t, d.drift) for k in range(2)]
    expected = d.inflation_factor * (t[0] + (t[1] - t[0]) * going[0] + (t[2] - t[1]) * going[1])
    assert expected == pytest.approx(d.expected_fraction_h1, abs=2e-5)


@pytest.mark.slow
def test_two_sided_design_by_brute_force_simulation():
    # The design compare_sequential(method="group") uses by default, 10 looks, checked by simulating 400,000 paths
    # of the looks' statistics (Brownian motion): each rate within 4 Monte-Carlo standard errors.
    d = group_sequential_design(10, alpha=0.05, sided=2, spending=("kim-demets", 2), futility="pocock")
    t = d.information
    rng = np.random.default_rng(5)
    reps = 400_000
    walk = np.cumsum(rng.normal(size=(reps, 10)) * np.sqrt(np.diff(t, prepend=0.0)), axis=1)
    futility = np.nan_to_num(d.futility, nan=0.0)
    for drift in (0.0, d.drift):
        z = (walk + drift * t) / np.sqrt(t)
        efficacy = np.abs(z) >= d.efficacy
        stops = efficacy | (np.abs(z) < futility)
        look = np.argmax(stops, axis=1)  # the last look always stops
        upper = (efficacy & (z > 0))[np.arange(reps), look].mean()
        fraction = d.inflation_factor * t[look].mean()
        se_fraction = d.inflation_factor * t[look].std() / math.sqrt(reps)
        if drift == 0.0:
            ignoring_futility = (np.abs(z) >= d.efficacy).any(axis=1).mean()  # non-binding: alpha exactly
            assert abs(ignoring_futility - 0.05) < 4 * math.sqrt(0.05 * 0.95 / reps)
            assert abs(fraction - d.expected_fraction_h0) < 4 * se_fraction
        else:
            assert abs(upper - 0.8) < 4 * math.sqrt(0.8 * 0.2 / reps)
            assert abs(fraction - d.expected_fraction_h1) < 4 * se_fraction


def test_bounds_at_other_fractions_spend_alpha_and_beta_there():
    d = group_sequential_design(10, alpha=0.05, power=0.9, spending=("kim-demets", 1.5), futility=("kim-demets", 0.5))
    # at the planned fractions: the design's bounds
    for k in (1, 4, 9):
        assert d.bounds_at(d.information[:k]) == pytest.approx((d.efficacy[k - 1], d.futility[k - 1]), abs=1e-12)
    # efficacy: alpha spent by each fraction, whatever the looks after; R (rpact 3.3.4):
    # getDesignGroupSequential(kMax = 4, alpha = 0.05, beta = 0.1, sided = 1, typeOfDesign = "asKD", gammaA = 1.5,
    #   informationRates = c(0.2, 0.45, 0.7, 1))$criticalValues[2] = 2.2516527250 (the design listed above)
    assert d.bounds_at([0.2, 0.45])[0] == pytest.approx(2.2516527250, abs=1e-5)
    # futility: beta spent by each fraction at the design's drift, P(f_1 < Z_1 < c_1, Z_2 < f_2) = beta(t_2) - beta(t_1)
    t = [0.2, 0.45]
    (c1, f1), f2 = d.bounds_at(t[:1]), d.bounds_at(t)[1]
    beta = [0.1 * x**0.5 for x in t]
    assert _rectangle([-40.0], [f1], t[:1], d.drift) == pytest.approx(beta[0], abs=1e-5)
    assert _rectangle([f1, -40.0], [c1, f2], t, d.drift) == pytest.approx(beta[1] - beta[0], abs=1e-5)
    assert d.bounds_at([0.2, 0.45, 1.0]) == (d.bounds_at([0.2, 0.45, 1.0])[0],) * 2  # a last look: bounds meet
    assert math.isnan(group_sequential_design(3).bounds_at([0.5])[1])  # no futility spending: none
    with pytest.raises(InputError, match=r"information must hold the fractions of the looks so far, increasing from "
                                         r"above 0 to at most 1; got \[0.5, 0.4\]"):
        d.bounds_at([0.5, 0.4])


def test_one_look_is_the_fixed_sample_test():
    # R: qnorm(0.975) = 1.959963985; getDesignGroupSequential(kMax = 1)$criticalValues = 1.959964, inflation 1
    for sided, alpha in ((1, 0.025), (2, 0.05)):
        d = group_sequential_design(1, alpha=alpha, sided=sided, futility="pocock")
        assert d.efficacy[0] == pytest.approx(1.959963985, abs=1e-9) and d.futility[0] == d.efficacy[0]
        assert (d.inflation_factor, d.expected_fraction_h1, d.expected_fraction_h0) == (1.0, 1.0, 1.0)
        assert d.drift == pytest.approx(1.959963985 + 0.8416212336, abs=1e-9)  # qnorm(0.975) + qnorm(0.8)


def test_without_futility_only_the_last_look_has_a_futility_bound():
    d = group_sequential_design(4, spending="pocock")
    assert np.isnan(d.futility[:-1]).all() and d.futility[-1] == d.efficacy[-1]
    assert d.futility_spending is None and d.spending == "pocock"


def test_frame_summary_display_and_sample_sizes():
    d = group_sequential_design(3, spending="pocock", futility=("kim-demets", 2))
    frame = d.to_frame()
    assert list(frame.columns) == COLUMNS == ["look", "information", "efficacy", "futility"]
    assert frame.look.tolist() == [1, 2, 3]
    np.testing.assert_allclose(frame.information, [1 / 3, 2 / 3, 1])
    np.testing.assert_array_equal(frame.efficacy, d.efficacy)
    summary = d.to_dict()
    assert summary["spending"] == "pocock" and summary["futility_spending"] == "kim-demets(2)"
    assert summary["looks"] == 3 and summary["sided"] == 1
    html = d._repr_html_()
    assert "GroupSequentialDesign" in html and "inflation_factor" in html and "<th>efficacy</th>" in html
    total = math.ceil(200 * d.inflation_factor)
    assert d.sample_sizes(200) == [math.ceil(total / 3), math.ceil(2 * total / 3), total]
    assert d.sample_sizes(1) == [1, 2, 3]  # at least one more case at each look
    assert isinstance(d, GroupSequentialDesign) and stats.group_sequential_design is group_sequential_design


def test_spending_names_are_case_insensitive_and_gamma_a_list():
    a = group_sequential_design(3, spending="Pocock", futility=["kim-demets", 1])
    b = group_sequential_design(3, spending="pocock", futility=("kim-demets", 1.0))
    np.testing.assert_array_equal(a.futility, b.futility)
    assert a.futility_spending == ("kim-demets", 1.0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"looks": 0}, "looks must be an integer >= 1; got 0"),
    ({"looks": 2.5}, "looks must be an integer >= 1; got 2.5"),
    ({"alpha": 0.5}, r"alpha must be a number in \(0, 0.5\) \(the type-I error\); got 0.5"),
    ({"alpha": "0.05"}, r"alpha must be a number in \(0, 0.5\) \(the type-I error\); got '0.05'"),
    ({"power": 0.02}, r"power must be a number in \(alpha / sided, 1\) = \(0.025, 1\), the chance of rejecting at "
                      r"the planned effect; got 0.02"),
    ({"power": 1.0}, r"power must be a number in \(alpha / sided, 1\)"),
    ({"sided": 3}, "sided must be 1 or 2; got 3"),
    ({"sided": True}, "sided must be 1 or 2; got True"),
    ({"spending": "wald"}, r"spending must be 'obrien-fleming', 'pocock' or \('kim-demets', gamma\) with gamma > 0; "
                           r"got 'wald'"),
    ({"spending": None}, r"spending must be 'obrien-fleming', 'pocock' or \('kim-demets', gamma\)"),
    ({"spending": ("kim-demets", 0)}, r"spending must be .* with gamma > 0; got \('kim-demets', 0\)"),
    ({"spending": "kim-demets"}, r"spending must be .*; got 'kim-demets'"),
    ({"futility": ("kim-demets", math.inf)}, r"futility must be None, 'obrien-fleming', 'pocock' or \('kim-demets', "
                                              r"gamma\) with gamma > 0; got \('kim-demets', inf\)"),
    ({"information": [0.5, 1.0]}, r"information must hold 3 fractions \(one per look\), increasing from above 0 to "
                                  r"exactly 1; got \[0.5, 1.0\]"),
    ({"information": [0.5, 0.4, 1.0]}, "information must hold 3 fractions"),
    ({"information": [0.0, 0.5, 1.0]}, "information must hold 3 fractions"),
    ({"information": [0.2, 0.5, 0.9]}, "information must hold 3 fractions"),
    ({"information": [0.2, math.nan, 1.0]}, "information must not contain NaN; found one at position 1"),
    ({"information": "abc"}, "information must be a sequence of numbers"),
])
def test_input_errors(kwargs, message):
    arguments = {"looks": 3, **kwargs}
    with pytest.raises(InputError, match=message):
        group_sequential_design(**arguments)
