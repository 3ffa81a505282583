"""Models, each registered by name in the module that defines it.

==============  ===========================  ===========================================
name            module                       paper
==============  ===========================  ===========================================
``cnn_mnist``   ``models.fedlc_cnn``         FedLC Table 8 (MNIST/FMNIST)
``cnn_cifar``   ``models.fedlc_cnn``         FedLC Table 9 (CIFAR-10/100, SVHN)
``logreg``      ``models.logistic_regression``  Synthetic(α, β)
``resnet18``    ``models.resnet``            FedLC Table 3 (ResNet-18, GroupNorm)
``simple_cnn``  ``models.simple_cnn``        FedConcat Tables 1-2 (1×28×28 and 3×32×32)
``vgg9``        ``models.vgg9``              FedConcat code's VGG-9 (dropout left out)
``mlp``         ``models.fedabc_nets``       FedABC's MNIST MLP (784→260→200→K)
``convnet``     ``models.fedabc_nets``       FedABC's CIFAR-10 ConvNet (= FedRep's CNNCifar)
``resnet8``     ``models.resnet8``           FEDIC (ResNet-8, GroupNorm)
==============  ===========================  ===========================================

Every model follows the contract of :mod:`fedlib.models.registry` (which also
says how a model declares its memory format, ``memory_format="channels_last"``):
``features(x) -> h`` (the body), a final ``nn.Linear`` named ``classifier``
(the head) and no buffers.  ``python -m fedlib params`` lists every registered
model.  A new model is a new module with a ``@register_model`` builder; this
package imports every module by discovery.
"""

from __future__ import annotations

from ..discovery import import_modules
from .registry import (LAYOUTS, MEMORY_FORMATS, MODELS, ModelSpec, body_keys, body_params, build_model, head_keys,
                       layer_keys, memory_format, model_names, register_model, to_memory_format)

__all__ = ["LAYOUTS", "MEMORY_FORMATS", "MODELS", "ModelSpec", "body_keys", "body_params", "build_model", "head_keys",
           "layer_keys", "memory_format", "model_names", "register_model", "to_memory_format"]


import_modules(__name__, __path__, globals(), skip=("registry",))
