"""poolkit.keras against keras.layers on the backend KERAS_BACKEND names (jax or torch): values in both data formats
and paddings, configs, .keras save/load, convert(), and a few training steps giving the same weights."""
import os

import keras
import numpy as np
import pytest

import poolkit.keras as pk
from poolkit.keras import _backend

BACKEND = keras.backend.backend()
RNG = np.random.default_rng(0)


def run(layer, x):
    return keras.ops.convert_to_numpy(layer(x))


def same_avg_reference(x, pool, strides, data_format):
    """Keras' documented 'same' average (TensorFlow's and Keras' JAX backend): SAME_UPPER padding, divided by the
    cells inside the input. (Keras' torch backend pads before pooling, so its border outputs count padding.)"""
    if data_format == "channels_first":
        x = np.moveaxis(x, 1, -1)
    r = len(pool)
    out = [-(-s // st) for s, st in zip(x.shape[1:-1], strides)]
    lo = [max((o - 1) * st + k - s, 0) // 2 for o, st, k, s in zip(out, strides, pool, x.shape[1:-1])]
    y = np.zeros((x.shape[0], *out, x.shape[-1]), np.float64)
    for o in np.ndindex(*out):
        start = [o[i] * strides[i] - lo[i] for i in range(r)]
        sl = tuple(slice(max(start[i], 0), max(start[i] + pool[i], 0)) for i in range(r))
        y[(slice(None),) + o] = x[(slice(None),) + sl].astype(np.float64).mean(axis=tuple(range(1, r + 1)))
    return np.moveaxis(y, -1, 1) if data_format == "channels_first" else y


SHAPES = {1: (2, 9, 3), 2: (2, 7, 6, 3), 3: (2, 5, 6, 4, 3)}
POOLS = {1: ((3,), (2,)), 2: ((3, 2), (2, 1)), 3: ((2, 3, 2), (2, 2, 1))}


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("kind", ["Max", "Average"])
def test_window_layers_are_keras(rank, data_format, padding, kind):
    x = RNG.standard_normal(SHAPES[rank]).astype(np.float32)
    pool, strides = POOLS[rank]
    name = f"{kind}Pooling{rank}D"
    mine = getattr(pk, name)(pool, strides, padding, data_format)
    theirs = getattr(keras.layers, name)(pool, strides, padding, data_format)
    y = run(mine, x)
    assert mine.get_config() | {"name": None} == theirs.get_config() | {"name": None}
    if kind == "Average" and padding == "same":
        np.testing.assert_allclose(y, same_avg_reference(x, pool, strides, data_format), rtol=1e-6, atol=1e-6)
        if BACKEND == "torch":
            return
    r = run(theirs, x)
    assert y.shape == r.shape
    if kind == "Max":
        np.testing.assert_array_equal(y, r)
    else:
        np.testing.assert_allclose(y, r, rtol=1e-6, atol=1e-6)
    assert y.shape == tuple(mine.compute_output_shape(x.shape))


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_global_and_adaptive_layers_are_keras(rank, data_format, keepdims):
    x = RNG.standard_normal(SHAPES[rank]).astype(np.float32)
    for kind in ("Max", "Average"):
        name = f"Global{kind}Pooling{rank}D"
        y, r = (run(getattr(m, name)(data_format, keepdims), x) for m in (pk, keras.layers))
        np.testing.assert_allclose(y, r, rtol=1e-6, atol=1e-7)
        name, out = f"Adaptive{kind}Pooling{rank}D", (2, 3, 1)[:rank]
        y, r = (run(getattr(m, name)(out, data_format), x) for m in (pk, keras.layers))
        np.testing.assert_allclose(y, r, rtol=1e-6, atol=1e-7)


def _cnn(layers, pools):
    keras.utils.set_random_seed(3)
    return keras.Sequential([
        keras.Input((13, 13, 3)),
        keras.layers.Conv2D(4, 3, padding="same"), pools[0],
        keras.layers.Conv2D(6, 2), pools[1],
        layers.GlobalMaxPooling2D() if "Max" in type(pools[1]).__name__ else layers.GlobalAveragePooling2D(),
        keras.layers.Dense(2)])


@pytest.mark.parametrize("kind", ["Max", "Average"])
def test_fit_gives_keras_weights(kind):
    """Non-overlapping windows: each input cell's gradient is one term, so max pooling trains bit-exactly on JAX
    (where windows overlap, XLA adds the terms in another order than poolkit's increasing output order). On torch
    poolkit's output is contiguous channels-last where Keras' is a permuted channels-first tensor, and the next
    convolution's oneDNN kernels sum in another order for each: equal to rounding there (the pooling gradients
    themselves are bit-exact: test_max_gradient_is_keras)."""
    layer = lambda m, *a: getattr(m, f"{kind}Pooling2D")(*a)  # noqa: E731
    x = RNG.standard_normal((16, 13, 13, 3)).astype(np.float32)
    t = RNG.standard_normal((16, 2)).astype(np.float32)
    weights = []
    for m in (keras.layers, pk):
        model = _cnn(m, [layer(m, 2), layer(m, 2, None, "same")])
        model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
        if weights:
            model.set_weights(start)
        start = model.get_weights()
        model.fit(x, t, batch_size=8, epochs=2, shuffle=False, verbose=0)
        weights.append(model.get_weights())
    for a, b in zip(*weights):
        if kind == "Max" and BACKEND == "jax":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not all(np.array_equal(a, b) for a, b in zip(start, weights[1]))  # training moved them


def _input_gradient(layer, x, dy):
    if BACKEND == "jax":
        import jax
        return np.asarray(jax.vjp(layer, x)[1](dy)[0])
    import torch
    xt = torch.tensor(x, requires_grad=True)
    layer(xt).backward(torch.tensor(dy))
    return xt.grad.numpy()


@pytest.mark.parametrize("args", [(2, None, "valid"), (2, None, "same"), (3, 1, "same")])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_max_gradient_is_keras(args, data_format):
    x = RNG.standard_normal((4, 13, 11, 6)).astype(np.float32)
    mine, theirs = pk.MaxPooling2D(*args, data_format), keras.layers.MaxPooling2D(*args, data_format)
    dy = RNG.standard_normal(run(theirs, x).shape).astype(np.float32)
    g, r = _input_gradient(mine, x, dy), _input_gradient(theirs, x, dy)
    if args[0] == args[1] or args[1] is None:
        np.testing.assert_array_equal(g, r)
    else:  # overlapping windows: several terms per cell, added in another order
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-6)


def test_save_load_round_trip(tmp_path):
    model = _cnn(pk, [pk.MaxPooling2D(2), pk.AveragePooling2D(3, 1, "same")])
    x = RNG.standard_normal((2, 13, 13, 3)).astype(np.float32)
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert [type(l) for l in loaded.layers] == [type(l) for l in model.layers]
    assert type(loaded.layers[1]) is pk.MaxPooling2D
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_convert_swaps_pooling_layers_only():
    model = _cnn(keras.layers, [keras.layers.MaxPooling2D(2), keras.layers.AveragePooling2D(3, 1, "same")])
    converted = pk.convert(model)
    kinds = [type(l) for l in converted.layers]
    assert kinds[1] is pk.MaxPooling2D and kinds[3] is pk.AveragePooling2D and kinds[4] is pk.GlobalAveragePooling2D
    assert converted.layers[0] is model.layers[0]  # weights shared
    x = RNG.standard_normal((2, 13, 13, 3)).astype(np.float32)
    np.testing.assert_allclose(converted.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="keras.Model"):
        pk.convert(keras.layers.Dense(1))


def test_other_backend_is_refused(monkeypatch):
    monkeypatch.setattr(keras.backend, "backend", lambda: "tensorflow")
    with pytest.raises(NotImplementedError, match="'tensorflow'.*'jax' and 'torch'"):
        pk.MaxPooling2D()(np.zeros((1, 4, 4, 1), np.float32))


def test_masked_global_average_is_keras():
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 0, 1]], bool)
    y, r = (keras.ops.convert_to_numpy(m.GlobalAveragePooling1D()(x, mask=mask)) for m in (pk, keras.layers))
    np.testing.assert_allclose(y, r, rtol=1e-6)
