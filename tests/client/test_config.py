"""The config file: owner-only permissions, and where the URL and token come from."""

import os
import stat

import pytest
from puc_client import config, errors
from puc_client.errors import ClientError


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_save_writes_the_token_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "puc" / "config.json"
    config.save(path, {"url": "https://site.example", "token": "abc"})
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert config.load(path) == {"url": "https://site.example", "token": "abc"}
    assert not path.with_name("config.json.tmp").exists()


def test_save_tightens_a_file_that_others_could_read(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    config.save(path, {"token": "abc"})
    assert mode(path) == 0o600


def test_load_warns_about_a_readable_file_and_refuses_bad_json(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text('{"token": "abc"}')
    os.chmod(path, 0o644)
    warnings = []

    class Sink:
        def write(self, text):
            warnings.append(text)

    assert config.load(path, warn=Sink()) == {"token": "abc"}
    assert warnings == [f"warning: {path} can be read by others; run `chmod 600 {path}`\n"]
    path.write_text("[1, 2")
    with pytest.raises(ClientError) as raised:
        config.load(path)
    assert raised.value.code == errors.USAGE
    assert "is not a JSON object; delete it and run `puc login` again" in raised.value.message


def test_missing_file_is_empty(tmp_path):
    assert config.load(tmp_path / "nothing.json") == {}


def test_path_follows_xdg_and_the_override(tmp_path):
    assert config.config_path({"XDG_CONFIG_HOME": "/x"}) == config.Path("/x/puc/config.json")
    assert config.config_path({"PUC_CONFIG": str(tmp_path / "c.json")}) == tmp_path / "c.json"


def test_flags_beat_the_environment_which_beats_the_file(tmp_path):
    path = tmp_path / "c.json"
    config.save(path, {"url": "https://saved.example/", "token": "saved"})
    environ = {"PUC_CONFIG": str(path)}
    assert config.resolve(url=None, token=None, environ=environ) == config.Settings(
        "https://saved.example", "saved", path
    )
    environ |= {"PUC_URL": "http://env.example", "PUC_TOKEN": "env"}
    settings = config.resolve(url=None, token=None, environ=environ)
    assert (settings.url, settings.token) == ("http://env.example", "env")
    settings = config.resolve(url="http://flag.example", token="flag", environ=environ)
    assert (settings.url, settings.token) == ("http://flag.example", "flag")


def test_default_url_and_a_bad_one(tmp_path):
    environ = {"PUC_CONFIG": str(tmp_path / "none.json")}
    settings = config.resolve(url=None, token=None, environ=environ)
    assert (settings.url, settings.token) == (config.DEFAULT_URL, None)
    with pytest.raises(ClientError) as raised:
        config.resolve(url="site.example", token=None, environ=environ)
    assert raised.value.message == (
        "the site URL must start with http:// or https://, got 'site.example'"
    )
