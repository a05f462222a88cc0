"""Local models on transformers: a Hugging Face model id or path, or a GGUF file (de-quantized).

Heavy imports (torch, transformers) happen only when a LocalBackend is built. The package:
``models`` (options, spec resolution), ``identity`` (content digests and the backend id),
``batches`` (batching and the shared prefix), ``generate``, ``choice`` (scoring and its
normalisation) and ``backend`` (loading, ``describe``).
"""

from biasatlas.backends.local.backend import LocalBackend, gguf_quantization
from biasatlas.backends.local.batches import PREFIX_CACHE_SIZE
from biasatlas.backends.local.choice import option_probabilities
from biasatlas.backends.local.identity import (
    DigestCache,
    ModelIdentity,
    backend_id,
    identify,
    weights_digest,
)
from biasatlas.backends.local.models import (
    EMBEDDED_ALIAS,
    EMBEDDED_FILE,
    EMBEDDED_PACKAGE,
    ChoiceNorm,
    LocalOptions,
    ModelLocation,
    embedded_model_path,
    locate,
)

__all__ = [
    "EMBEDDED_ALIAS",
    "EMBEDDED_FILE",
    "EMBEDDED_PACKAGE",
    "PREFIX_CACHE_SIZE",
    "ChoiceNorm",
    "DigestCache",
    "LocalBackend",
    "LocalOptions",
    "ModelIdentity",
    "ModelLocation",
    "backend_id",
    "embedded_model_path",
    "gguf_quantization",
    "identify",
    "locate",
    "option_probabilities",
    "weights_digest",
]
