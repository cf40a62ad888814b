import numpy as np

from xamt.groups.agree import Agreement


def test_assess_is_group_and_dispersion_in_one_pass():
    a = Agreement()
    cases = [
        [np.array([1.0, 2.0]), np.array([1.0, 2.0]), np.array([1.0, 9.0])],
        [(np.array([1.0]), "x"), (np.array([1.0]), "y")],
        [np.array([1.0]), (np.array([1.0]),)],
        [np.array([np.nan, 1.0]), np.array([np.nan, 1.0])],
    ]
    for values in cases:
        flags, disp = a.assess(values)
        assert flags == a.group(values)
        assert disp == a.dispersion(values)
