"""The pooling a layer runs, by Keras backend: poolkit.jax on 'jax', poolkit.torch on 'torch'."""
import keras

SUPPORTED = ("jax", "torch")


def _name():
    b = keras.backend.backend()
    if b not in SUPPORTED:
        raise NotImplementedError(f"poolkit.keras: the Keras backend is {b!r}; poolkit's layers run on "
                                  f"{' and '.join(repr(s) for s in SUPPORTED)} (set KERAS_BACKEND)")
    return b


def window(kind, x, pool_size, strides, padding, data_format):
    """Keras' max or average pooling ('valid' or 'same'; 'same' averages divide by the cells inside the input)."""
    if _name() == "jax":
        from .. import jax as pj
        cf = data_format == "channels_first"
        if kind == "max":
            return pj.max_pool(x, pool_size, strides, padding.upper(), channels_first=cf)
        return pj.avg_pool(x, pool_size, strides, padding.upper(), count_include_pad=False, channels_first=cf)
    from .. import torch as pt
    r = len(pool_size)
    if kind == "max":
        return getattr(pt, f"max_pool{r}d")(x, pool_size, strides, padding, data_format=data_format)
    return getattr(pt, f"avg_pool{r}d")(x, pool_size, strides, padding, count_include_pad=False,
                                        data_format=data_format)


def global_(kind, x, keepdims, data_format):
    if _name() == "jax":
        from .. import jax as pj
        f = pj.global_max_pool if kind == "max" else pj.global_avg_pool
        return f(x, keepdims, channels_first=data_format == "channels_first")
    from .. import torch as pt
    y = (pt.global_max_pool if kind == "max" else pt.global_avg_pool)(x, data_format=data_format)
    if keepdims:
        return y
    return y.flatten(1) if data_format == "channels_first" else y.reshape(y.shape[0], y.shape[-1])


def adaptive(kind, x, output_size, data_format):
    r = len(output_size)
    if _name() == "jax":
        from .. import jax as pj
        f = pj.adaptive_max_pool if kind == "max" else pj.adaptive_avg_pool
        return f(x, tuple(output_size), channels_first=data_format == "channels_first")
    from .. import torch as pt
    f = getattr(pt, f"adaptive_{kind}_pool{r}d")
    if data_format == "channels_first":
        return f(x, tuple(output_size))
    perm = (0, r + 1) + tuple(range(1, r + 1))
    back = (0,) + tuple(range(2, r + 2)) + (1,)
    return f(x.permute(perm), tuple(output_size)).permute(back)
