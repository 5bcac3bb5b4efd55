"""Keras 3 pooling layers with keras.layers' names, arguments, defaults and get_config(), computed by poolkit. Each
subclasses the Keras layer it replaces and changes only call(); registered as 'poolkit>Name' for .keras files."""
import keras

from . import _backend

__all__ = []


def _register(cls):
    cls = keras.saving.register_keras_serializable(package="poolkit")(cls)
    globals()[cls.__name__] = cls
    __all__.append(cls.__name__)
    return cls


def _window_call(kind):
    def call(self, inputs):
        return _backend.window(kind, inputs, tuple(self.pool_size), tuple(self.strides), self.padding,
                               self.data_format)
    return call


def _global_call(kind, base):
    def call(self, inputs, mask=None):
        if mask is not None:  # masked means (1-D layers): Keras' own reduction over the unmasked steps
            return base.call(self, inputs, mask)
        return _backend.global_(kind, inputs, self.keepdims, self.data_format)
    return call


def _adaptive_call(kind):
    def call(self, inputs):
        return _backend.adaptive(kind, inputs, tuple(self.output_size), self.data_format)
    return call


for _r in (1, 2, 3):
    for _kind, _name in (("max", "Max"), ("avg", "Average")):
        _register(type(f"{_name}Pooling{_r}D", (getattr(keras.layers, f"{_name}Pooling{_r}D"),),
                       {"call": _window_call(_kind), "__module__": __name__}))
        _base = getattr(keras.layers, f"Global{_name}Pooling{_r}D")
        _register(type(f"Global{_name}Pooling{_r}D", (_base,),
                       {"call": _global_call(_kind, _base), "__module__": __name__}))
        _register(type(f"Adaptive{_name}Pooling{_r}D", (getattr(keras.layers, f"Adaptive{_name}Pooling{_r}D"),),
                       {"call": _adaptive_call(_kind), "__module__": __name__}))

# Keras' short aliases
for _alias, _full in (("MaxPool", "MaxPooling"), ("AvgPool", "AveragePooling"), ("GlobalMaxPool", "GlobalMaxPooling"),
                      ("GlobalAvgPool", "GlobalAveragePooling")):
    for _r in (1, 2, 3):
        globals()[f"{_alias}{_r}D"] = globals()[f"{_full}{_r}D"]
        __all__.append(f"{_alias}{_r}D")
