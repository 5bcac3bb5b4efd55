"""tests/jax: poolkit.jax and poolkit.keras. Two CPU devices for shard_map; Keras writes nowhere but a temp dir.
KERAS_BACKEND comes from the caller (scripts/test-steps/34-jax-keras.sh runs the Keras tests on 'jax' and 'torch')."""
import os
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KERAS_HOME", tempfile.mkdtemp(prefix="poolkit-keras-"))
