"""torch.nn modules over poolkit.torch, with torch.nn's constructor arguments; they drop into nn.Sequential."""
import torch

from .. import torch as F


class _Pool(torch.nn.Module):
    _fn = None
    _args = ()

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = list(self._args)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}: too many positional arguments")
        values = dict(self._defaults)
        for n, v in zip(names, args):
            values[n] = v
        for n, v in kwargs.items():
            if n not in values:
                raise TypeError(f"{type(self).__name__}: unexpected keyword argument {n!r}")
            values[n] = v
        for n in names:
            if values[n] is _REQUIRED:
                raise TypeError(f"{type(self).__name__}: missing argument {n!r}")
        self._values = values

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self._values.items())

    def forward(self, input):
        return getattr(F, self._fn)(input, **self._values)


_REQUIRED = object()


class _Fractional(_Pool):
    """torch.nn's fractional modules check at construction what their functional form leaves to the output's fit:
    exactly one of output_size and output_ratio, and a ratio strictly between 0 and 1."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        size, ratio = self._values["output_size"], self._values["output_ratio"]
        if (size is None) == (ratio is None):
            raise ValueError(f"poolkit: output_size: {type(self).__name__} needs exactly one of output_size and "
                             "output_ratio")
        if ratio is not None:
            if not hasattr(ratio, "__len__"):  # one number for every axis, as torch.nn's modules take it
                ratio = self._values["output_ratio"] = (ratio,) * int(self._fn[-2])
            if not all(0 < float(v) < 1 for v in ratio):
                raise ValueError(f"poolkit: output_ratio: must be between 0 and 1 (got {ratio})")


def _module(name, fn, args, defaults, base=_Pool):
    cls = type(name, (base,), {"_fn": fn, "_args": tuple(a for a, _ in args),
                                "_defaults": {a: d for a, d in args} | defaults})
    cls.__module__ = __name__
    return cls


_R = _REQUIRED
for _r in (1, 2, 3):
    globals()[f"MaxPool{_r}d"] = _module(f"MaxPool{_r}d", f"max_pool{_r}d", [
        ("kernel_size", _R), ("stride", None), ("padding", 0), ("dilation", 1), ("return_indices", False),
        ("ceil_mode", False)], {})
    _avg = [("kernel_size", _R), ("stride", None), ("padding", 0), ("ceil_mode", False), ("count_include_pad", True)]
    if _r > 1:
        _avg.append(("divisor_override", None))
    globals()[f"AvgPool{_r}d"] = _module(f"AvgPool{_r}d", f"avg_pool{_r}d", _avg, {})
    globals()[f"LPPool{_r}d"] = _module(f"LPPool{_r}d", f"lp_pool{_r}d", [
        ("norm_type", _R), ("kernel_size", _R), ("stride", None), ("ceil_mode", False)], {})
    globals()[f"AdaptiveMaxPool{_r}d"] = _module(f"AdaptiveMaxPool{_r}d", f"adaptive_max_pool{_r}d", [
        ("output_size", _R), ("return_indices", False)], {})
    globals()[f"AdaptiveAvgPool{_r}d"] = _module(f"AdaptiveAvgPool{_r}d", f"adaptive_avg_pool{_r}d", [
        ("output_size", _R)], {})
    globals()[f"FractionalMaxPool{_r}d"] = _module(f"FractionalMaxPool{_r}d", f"fractional_max_pool{_r}d", [
        ("kernel_size", _R), ("output_size", None), ("output_ratio", None), ("return_indices", False),
        ("_random_samples", None)], {}, _Fractional)
    globals()[f"MixedPool{_r}d"] = _module(f"MixedPool{_r}d", f"mixed_pool{_r}d", [
        ("kernel_size", _R), ("stride", None), ("padding", 0), ("ceil_mode", False), ("count_include_pad", None),
        ("divisor_override", None), ("lambda_", 0.5)], {})


class _Unpool(_Pool):
    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(input, indices, output_size=output_size, **self._values)


class _Stochastic(_Pool):
    def forward(self, input):
        return getattr(F, self._fn)(input, training=self.training, **self._values)


for _r in (1, 2, 3):
    _u = type(f"MaxUnpool{_r}d", (_Unpool,), {"_fn": f"max_unpool{_r}d", "_args": ("kernel_size", "stride", "padding"),
                                             "_defaults": {"kernel_size": _R, "stride": None, "padding": 0}})
    _u.__module__ = __name__
    globals()[_u.__name__] = _u
    _s = type(f"StochasticPool{_r}d", (_Stochastic,), {
        "_fn": f"stochastic_pool{_r}d", "_args": ("kernel_size", "stride", "padding", "ceil_mode", "seed"),
        "_defaults": {"kernel_size": _R, "stride": None, "padding": 0, "ceil_mode": False, "seed": 0}})
    _s.__module__ = __name__
    globals()[_s.__name__] = _s


# torch.nn's pooling modules that convert() replaces; LPPool3d where this PyTorch has it.
_CONVERTIBLE = [f"{kind}{r}d" for r in (1, 2, 3) for kind in (
    "MaxPool", "AvgPool", "AdaptiveMaxPool", "AdaptiveAvgPool", "LPPool", "FractionalMaxPool", "MaxUnpool")]


def _equivalent(module):
    """poolkit's module for a torch.nn pooling module (same arguments, same training mode), or None."""
    name = type(module).__name__
    if name not in _CONVERTIBLE or type(module) is not getattr(torch.nn, name, None):
        return None
    cls = globals()[name]
    new = cls(**{a: getattr(module, a) for a in cls._args})
    return new.train(module.training)


def convert(model):
    """Replaces every torch.nn pooling module in model (MaxPool, AvgPool, AdaptiveMaxPool, AdaptiveAvgPool, LPPool,
    FractionalMaxPool, MaxUnpool; 1 to 3 spatial dims) in place with poolkit's, keeping its arguments; returns the
    model (the replacement itself when model is such a module)."""
    new = _equivalent(model)
    if new is not None:
        return new
    for name, child in model.named_children():
        new = _equivalent(child)
        if new is None:
            convert(child)
        else:
            setattr(model, name, new)
    return model


from .relu_order import pool_before_relu  # noqa: E402  (re-exported: poolkit.torch.nn.pool_before_relu)
