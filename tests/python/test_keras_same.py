"""Keras/TensorFlow padding='valid'|'same' (odd padding cell at the end; averages over real cells only) on
hand-computed cases, channels-first and channels-last."""
import numpy as np
import pytest

import poolkit

ROW5 = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
ROW6 = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
ROW7 = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
GRID = np.arange(9, dtype=np.float64).reshape(1, 1, 3, 3)

# (input, pool, strides, padding, expected max, expected average), worked out by hand:
# 'same': out = ceil(in / s), total padding max((out - 1) * s + k - in, 0), the odd cell at the end.
CASES = [
    (ROW5, 2, 2, "same", [2, 4, 5], [1.5, 3.5, 5]),          # pad 0 | 1
    (ROW5, 3, 1, "same", [2, 3, 4, 5, 5], [1.5, 2, 3, 4, 4.5]),  # pad 1 | 1
    (ROW6, 3, 2, "same", [3, 5, 6], [2, 4, 5.5]),            # pad 0 | 1
    (ROW7, 2, 3, "same", [2, 5, 7], [1.5, 4.5, 7]),          # stride > pool: pad 0 | 1
    (ROW5, 1, 3, "same", [1, 4], [1, 4]),                    # no padding needed
    (ROW5, 2, 2, "valid", [2, 4], [1.5, 3.5]),
    (ROW6, 4, 1, "same", [3, 4, 5, 6, 6, 6], [2, 2.5, 3.5, 4.5, 5, 5.5]),  # pad 1 | 2
    (GRID, 2, 2, "same", [[4, 5], [7, 8]], [[2, 3.5], [6.5, 8]]),
    (GRID, (3, 1), (2, 1), "same", [[3, 4, 5], [6, 7, 8]], [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]),
]


@pytest.mark.parametrize("x, pool, strides, padding, want_max, want_avg", CASES)
@pytest.mark.parametrize("data_format", ["channels_first", "channels_last"])
def test_keras_padding(x, pool, strides, padding, want_max, want_avg, data_format, tally):
    r = x.ndim - 2
    want_max = np.asarray(want_max, dtype=x.dtype)[None, None]
    want_avg = np.asarray(want_avg, dtype=x.dtype)[None, None]
    if data_format == "channels_last":
        x, want_max, want_avg = (np.moveaxis(a, 1, -1) for a in (x, want_max, want_avg))
    mp, ap = getattr(poolkit, f"max_pool{r}d"), getattr(poolkit, f"avg_pool{r}d")
    got_max = mp(x, pool, strides, padding, data_format=data_format)
    got_avg = ap(x, pool, strides, padding, data_format=data_format)
    np.testing.assert_array_equal(got_max, want_max)
    np.testing.assert_array_equal(got_avg, want_avg)
    tally("keras padding (hand-computed)", cases=1)


def test_same_pads_max_with_minus_infinity():
    x = np.array([[[-5.0, -4.0, -3.0]]], dtype=np.float32)
    np.testing.assert_array_equal(poolkit.max_pool1d(x, 2, 2, "same"), [[[-4.0, -3.0]]])
