"""Entry points that inference servers call in each of their processes (declared in
``pyproject.toml``); each imports its integration only when it is used.

- ``sglang.srt.plugins``: ``munch = munch._plugins:sglang`` registers the SGLang grammar
  backend ``munch`` (selected with ``--grammar-backend munch``; nothing changes otherwise).
- ``vllm.general_plugins``: ``munch = munch._plugins:vllm`` makes vLLM's structured outputs use
  munch (``munch.vllm.install``) when the environment variable ``MUNCH_VLLM`` is ``1``, and
  does nothing otherwise: vLLM has no backend name a plugin could add, so installing munch must
  not change vLLM unless asked.
"""

import os


def sglang() -> None:
    """Registers munch's SGLang grammar backend under the name ``munch``."""
    import munch.sglang

    munch.sglang.register()


def vllm() -> None:
    """``munch.vllm.install()`` when ``MUNCH_VLLM=1``."""
    if os.environ.get("MUNCH_VLLM") == "1":
        import munch.vllm

        munch.vllm.install()
