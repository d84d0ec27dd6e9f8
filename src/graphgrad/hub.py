"""``graphgrad.hub``: torch.hub's checkpoint cache. ``load_state_dict_from_url`` reads a file
already in the cache (``get_dir()/checkpoints``, as torch's, so checkpoints torch downloaded are
found) with ``graphgrad.load``, and downloads missing ones with urllib. Loading models from a
GitHub repository's ``hubconf.py`` (``load``, ``list``, ``help``) is not available: it runs
third-party code written against torch."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
import urllib.request

__all__ = ["get_dir", "set_dir", "load_state_dict_from_url", "download_url_to_file", "load",
           "list", "help"]

_hub_dir = None
_HASH = re.compile(r"-([a-f0-9]*)\.")  # torch's checkpoint names: <name>-<sha256 prefix>.<ext>


def get_dir() -> str:
    """The hub directory: ``set_dir``'s, else ``$TORCH_HOME/hub``, else
    ``$XDG_CACHE_HOME/torch/hub`` (``~/.cache/torch/hub``)."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("TORCH_HOME") or os.path.join(
        os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` to ``dst`` through a temporary file in the same folder (so ``dst``
    appears whole or not at all), checking the SHA-256 prefix when given."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    sha = hashlib.sha256()
    with tempfile.NamedTemporaryFile(delete=False, dir=folder) as tmp:
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    url, headers={"User-Agent": "graphgrad.hub"})) as resp:
                while chunk := resp.read(1 << 16):
                    tmp.write(chunk)
                    sha.update(chunk)
        except BaseException:
            os.unlink(tmp.name)
            raise
    if hash_prefix is not None and not sha.hexdigest().startswith(hash_prefix):
        os.unlink(tmp.name)
        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                           f'"{sha.hexdigest()}")')
    shutil.move(tmp.name, dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at ``url``, from the cache when it is there, read by
    ``graphgrad.load``."""
    from .serialization import load as _load

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        match = _HASH.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress)
    kwargs = {"map_location": map_location}
    if weights_only:
        kwargs["weights_only"] = True
    return _load(cached, **kwargs)


def _no_hubconf(what):
    raise NotImplementedError(f"torch.hub.{what}: loading models from a repository's "
                              "hubconf.py is not available in graphgrad (it runs third-party "
                              "torch code); build the model and use load_state_dict_from_url")


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    _no_hubconf("load")


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    _no_hubconf("list")


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    _no_hubconf("help")
