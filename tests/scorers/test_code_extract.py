"""scorers/code_extract.py: the program is the last fenced block."""

from __future__ import annotations

from scorers.code_extract import CodeCheckResult, code_blocks, last_code_block


def test_last_block_wins_and_language_tag_is_optional():
    text = "First try:\n```python\nx = 1\n```\nBetter:\n```\ny = 2\n```\nDone."
    assert last_code_block(text) == "y = 2"
    assert [b.language for b in code_blocks(text)] == ["python", ""]


def test_no_block_is_none_and_empty_block_is_empty_string():
    assert last_code_block("just prose, no code") is None
    assert last_code_block("") is None
    assert last_code_block(None) is None
    assert last_code_block("```python\n```") == ""


def test_unclosed_block_ignored_unless_allowed():
    text = "```python\nprint(1)\n```\nand then\n```python\nprint(2)"
    assert last_code_block(text) == "print(1)"
    assert last_code_block(text, allow_unclosed=True) == "print(2)"


def test_indented_fence_is_dedented_and_longer_fences_nest():
    text = "1. step\n   ```py\n   def f():\n       return 1\n   ```\n"
    assert last_code_block(text) == "def f():\n    return 1"
    nested = "````markdown\n```python\nx = 1\n```\n````"
    assert last_code_block(nested) == "```python\nx = 1\n```"


def test_inline_backticks_in_prose_do_not_open_a_block():
    text = "Use ```python fences``` like this:\n```python\nz = 3\n```"
    assert last_code_block(text) == "z = 3"


def test_language_filter_keeps_python_and_untagged():
    text = "```python\na = 1\n```\n```bash\nls\n```"
    assert last_code_block(text) == "ls"
    assert last_code_block(text, language="python") == "a = 1"


def test_crlf_and_tilde_fences():
    assert last_code_block("~~~python\r\nq = 4\r\n~~~\r\n") == "q = 4"


def test_code_check_result_is_a_check_result():
    r = CodeCheckResult(True, "x", "ok", {"status": "passed"})
    assert r.score == 1.0 and r.details["status"] == "passed"
