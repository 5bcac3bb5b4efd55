"""poolkit's Keras 3 pooling layers (keras.layers' names, arguments and configs; the JAX and torch backends) and
convert(), which swaps the pooling layers of a built model for them."""
import keras

from . import layers
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layer_names

__all__ = list(_layer_names) + ["convert"]

# keras.layers class -> poolkit's subclass of it
_REPLACEMENT = {cls.__mro__[1]: cls for cls in (getattr(layers, n) for n in _layer_names)}


def _swap(layer):
    cls = _REPLACEMENT.get(type(layer))
    return cls.from_config(layer.get_config()) if cls is not None else layer


def convert(model):
    """A model like `model` (Sequential or functional) whose keras.layers pooling layers are poolkit's; every other
    layer is the same object, its weights shared."""
    if not isinstance(model, keras.Model):
        raise TypeError(f"poolkit.keras.convert: model: must be a keras.Model (got {type(model).__name__})")
    return keras.models.clone_model(model, clone_function=_swap)
