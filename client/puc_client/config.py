"""Where the site is and the token: the command line, then the environment (PUC_URL,
PUC_TOKEN), then the config file `login` writes (0600: the token is a password).

The file is ``$PUC_CONFIG``, else ``$XDG_CONFIG_HOME/puc/config.json`` (``~/.config``
when unset; ``%APPDATA%`` on Windows).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import errors
from .errors import ClientError

DEFAULT_URL = "http://127.0.0.1:8000"
ENV_URL = "PUC_URL"
ENV_TOKEN = "PUC_TOKEN"
ENV_CONFIG = "PUC_CONFIG"


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get(ENV_CONFIG):
        return Path(environ[ENV_CONFIG]).expanduser()
    if os.name == "nt":
        base = environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
    else:
        base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "puc" / "config.json"


def load(path: Path, *, warn=sys.stderr) -> dict:
    """The saved settings ({} when there is no file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ClientError(f"cannot read {path}: {error.strerror}", errors.USAGE) from None
    if os.name != "nt" and path.stat().st_mode & 0o077 and warn is not None:
        warn.write(f"warning: {path} can be read by others; run `chmod 600 {path}`\n")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ClientError(
            f"{path} is not a JSON object; delete it and run `puc login` again", errors.USAGE
        )
    return data


def save(path: Path, data: dict) -> None:
    """Write ``data`` readable by its owner only, replacing the file in one step."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(path.name + ".tmp")
    # Created 0600 from the start: the token is never readable by others, not even briefly.
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.chmod(partial, stat.S_IRUSR | stat.S_IWUSR)  # a leftover .tmp may be wider
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.replace(partial, path)
    except OSError as error:
        if partial.exists():
            partial.unlink()
        raise ClientError(f"cannot write {path}: {error.strerror}", errors.USAGE) from None


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None
    path: Path
    # No --url, no $PUC_URL, no saved site: DEFAULT_URL stands in.
    url_defaulted: bool = False


def normalise_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ClientError(
            f"the site URL must start with http:// or https://, got {url!r}", errors.USAGE
        )
    return url


def resolve(
    *, url: str | None, token: str | None, environ: Mapping[str, str] = os.environ
) -> Settings:
    path = config_path(environ)
    saved = load(path)
    chosen_url = url or environ.get(ENV_URL) or saved.get("url")
    chosen_token = token or environ.get(ENV_TOKEN) or saved.get("token") or None
    return Settings(
        normalise_url(chosen_url or DEFAULT_URL), chosen_token, path, url_defaulted=not chosen_url
    )
