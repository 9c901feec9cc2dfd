"""Bad `-M` model args of the local provider fail at start with a message naming the arg
(no model is loaded: validation comes first)."""

from __future__ import annotations

import pytest

from workers import local_provider as lp


@pytest.fixture(autouse=True)
def _inspect_dirs(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"n_ctx": "big"}, "-M n_ctx must be a whole number >= 64, got 'big'"),
        ({"n_parallel": 0}, "-M n_parallel must be a whole number >= 1"),
        ({"n_threads": -2}, "-M n_threads must be a whole number >= 0"),
        ({"n_batch": 1.5}, "-M n_batch must be a whole number"),
        ({"default_max_tokens": 0}, "-M default_max_tokens must be a whole number >= 1"),
        ({"timeout": -1}, "-M timeout="),
        ({"max_retries": "many"}, "-M max_retries="),
        ({"n_tread": 2}, "unknown model arg(s) ['n_tread']"),
    ],
)
def test_bad_model_arg_is_named(args, named, monkeypatch):
    from inspect_ai.model import get_model

    def never(name):
        raise AssertionError("validation must come before the model is resolved")

    monkeypatch.setattr(lp, "resolve_model", never)
    with pytest.raises(ValueError) as err:
        get_model("local/smollm2-135m", memoize=False, **args)
    assert named in str(err.value)


def test_missing_chat_template_file_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"chat template .*nope\.jinja.*-M chat_template="):
        lp._read_template(str(tmp_path / "nope.jinja"))


def test_whole_arg_accepts_numbers_given_as_text():
    assert lp.whole_arg("n_ctx", "2048", 64) == 2048 and lp.whole_arg("n_ctx", 512, 64) == 512
